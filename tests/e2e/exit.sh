#!/usr/bin/env bash
# ljlog e2e: a program that leaves through os.exit still gets a complete log.
# os.exit(0) exits without closing the Lua state (the log is closed at
# process exit); os.exit(0, true) closes it first (the state's finalizers
# detach). Both logs are complete and count tick()'s calls exactly.
. "$(dirname "$0")/lib.sh"

prog=$E2E/exit.lua
tick_line=$(grep -n '^local function tick' "$prog" | cut -d: -f1)
n=1234

for how in exit close; do
	log=$T/$how.ljlog
	rc=0
	profile "file=$log,calls,flush=1ms" "$prog" "$how" "$n" >"$T/out" 2>"$T/err" || rc=$?
	expect_eq "os.exit ($how): exit status" 0 "$rc"
	counted=$(cat "$T/out")
	expect_eq "os.exit ($how): the program's count" "$n" "$counted"
	check_complete "$log"
	report_json "$log" "$T/r.json"
	expect_eq "os.exit ($how): complete" true "$(json_get "$T/r.json" 'd["complete"]')"
	expect_eq "os.exit ($how): calls of tick()" "$counted" \
		"$(json_get "$T/r.json" "fn.get('$prog:$tick_line', {}).get('calls')")"
	expect_eq "os.exit ($how): vm_list heap_detach present" true \
		"$(json_get "$T/r.json" 'all(v.get("heap_detach") is not None for v in d["vm_list"])')"
	ok "os.exit(0$([ "$how" = close ] && echo ', true')): complete log, tick() called $counted times"
done
