#!/usr/bin/env bash
# ljlog e2e: the writer thread (src/logger/flushq.c) loses and reorders
# nothing, and a program that outruns it waits, counted in END.
#  - A writer slowed by LJLOG_TEST_WRITER_DELAY_US (a sleep before each
#    buffer it writes) and 4 KiB buffers: the program fills its FLUSHQ_DEPTH
#    buffers many times faster than the writer empties them, so it must
#    wait. Call counts still equal a debug.sethook count (calls.lua), the
#    heap balance equals LuaJIT's own (alloc.lua), and END's flush_waits,
#    shown by report and dump, is at least 1.
#  - nowriter: the VM's own thread writes; the same counts, no waits.
. "$(dirname "$0")/lib.sh"

export LJLOG_TEST_WRITER_DELAY_US=3000

# waits_of JSON: END's flush_waits and flush_wait_ns, "N NS".
waits_of() { json_get "$1" '"%d %d" % (d["flush_waits"], d["flush_wait_ns"])'; }

calls_match "$E2E/calls.lua" "calls,alloc,gc,buffer=4k"
read -r waits ns <<<"$(waits_of "$T/calls.json")"
[ "$waits" -ge 1 ] || fail "slowed writer: no wait counted (flush_waits $waits)"
[ "$ns" -gt 0 ] || fail "slowed writer: $waits waits of 0 ns"
ljlog report "$T/calls.ljlog" >"$T/report.txt" 2>&1 || { show "$T/report.txt"; fail "report failed"; }
grep -q "waited .* for ljlog.s writer thread ($waits times all" "$T/report.txt" ||
	{ show "$T/report.txt"; fail "the report does not say the program waited $waits times"; }
ljlog dump "$T/calls.ljlog" >"$T/dump.txt" 2>&1 || { show "$T/dump.txt"; fail "dump failed"; }
grep -q "flush_waits $waits, flush_wait_ns $ns" "$T/dump.txt" ||
	{ grep -A3 'END' "$T/dump.txt" | head; fail "dump does not show END's flush_waits $waits"; }
ok "writer 3 ms behind each 4 KiB buffer: exact call counts, complete log, $waits waits ($ns ns) in END, report and dump"

log=$T/alloc.ljlog
profile "file=$log,nodefaults,alloc,buffer=4k" "$E2E/alloc.lua" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "alloc.lua: the profiled run failed"; }
heap=$(cat "$T/out")
check_complete "$log"
report_json "$log" "$T/r.json"
expect_eq "slowed writer: heap.attach + alloc_bytes - free_bytes" "$heap" \
	"$(json_get "$T/r.json" 'd["heap"]["attach"] + d["heap"]["alloc_bytes"] - d["heap"]["free_bytes"]')"
read -r waits ns <<<"$(waits_of "$T/r.json")"
[ "$waits" -ge 1 ] || fail "slowed writer, alloc: no wait counted"
ok "writer behind, exact alloc: heap balance = collectgarbage('count')*1024 = $heap, $waits waits"

calls_match "$E2E/calls.lua" "calls,alloc,gc,buffer=4k,nowriter"
expect_eq "nowriter: END's waits" "0 0" "$(waits_of "$T/calls.json")"
ljlog report "$T/calls.ljlog" >"$T/report.txt" 2>&1
grep -q "writer thread" "$T/report.txt" && { show "$T/report.txt"; fail "nowriter: the report speaks of waits"; }
ok "nowriter: the VM's thread writes; exact call counts, no waits"
