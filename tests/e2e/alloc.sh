#!/usr/bin/env bash
# ljlog e2e: the heap balance in the log equals LuaJIT's own count.
# alloc.lua allocates and frees a lot, calls ljlog.stop() and prints
# collectgarbage("count") * 1024. The reader's heap.live (attach + allocs -
# frees), the VM's heap_live and its heap_detach must all equal it.
. "$(dirname "$0")/lib.sh"

for opts in "nodefaults,alloc" "calls,alloc,gc,buffer=4k,flush=1ms"; do
	log=$T/alloc.ljlog
	rm -f "$log"
	profile "file=$log,$opts" "$E2E/alloc.lua" >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "[$opts] the profiled run failed"; }
	heap=$(cat "$T/out")
	case $heap in
	'' | *[!0-9]*) fail "[$opts] alloc.lua printed '$heap', not a byte count" ;;
	esac
	check_complete "$log"
	report_json "$log" "$T/r.json"
	expect_eq "[$opts] vms" 1 "$(json_get "$T/r.json" 'd["vms"]')"
	expect_eq "[$opts] heap.live" "$heap" "$(json_get "$T/r.json" 'd["heap"]["live"]')"
	expect_eq "[$opts] heap.attach + alloc_bytes - free_bytes" "$heap" \
		"$(json_get "$T/r.json" 'd["heap"]["attach"] + d["heap"]["alloc_bytes"] - d["heap"]["free_bytes"]')"
	expect_eq "[$opts] vm_list[0].heap_live" "$heap" "$(json_get "$T/r.json" 'd["vm_list"][0]["heap_live"]')"
	expect_eq "[$opts] vm_list[0].heap_detach" "$heap" "$(json_get "$T/r.json" 'd["vm_list"][0]["heap_detach"]')"
	expect_eq "[$opts] vm_list[0].heap_attach" \
		"$(json_get "$T/r.json" 'd["heap"]["attach"]')" \
		"$(json_get "$T/r.json" 'd["vm_list"][0]["heap_attach"]')"
	# The program did allocate and free a lot: the balance is not trivial.
	[ "$(json_get "$T/r.json" 'd["heap"]["free_bytes"] > 10 * 1024 * 1024')" = true ] ||
		fail "[$opts] less than 10 MiB freed: $(json_get "$T/r.json" 'd["heap"]')"
	[ "$(json_get "$T/r.json" 'd["heap"]["peak"] >= d["heap"]["live"]')" = true ] ||
		fail "[$opts] heap.peak below heap.live: $(json_get "$T/r.json" 'd["heap"]')"
	ok "[$opts] heap.live = heap_live = heap_detach = collectgarbage('count')*1024 = $heap"
done
