#!/usr/bin/env bash
# ljlog e2e: a log can be read while the program still writes it.
# spin.lua runs with flush=50ms until told to stop; `ljlog dump --follow`
# must show an EVENTS block while the program is still alive, and end by
# itself with the END block once the program exits.
. "$(dirname "$0")/lib.sh"

log=$T/follow.ljlog
profile_bg "file=$log,flush=50ms" "$E2E/spin.lua" "$T/stop" >"$T/spin.out" 2>"$T/spin.err"
pid=$BG_PID
wait_for 30 test -s "$log" || fail "spin.lua did not create $log"

[ -x "$LJLOG" ] || fail "the ljlog CLI is not built ($LJLOG)"
timeout "$E2E_TIMEOUT" "$LJLOG" dump --follow "$log" >"$T/dump.out" 2>"$T/dump.err" &
dpid=$!
track_pid "$dpid"

seen_events() {
	grep -q ': EVENTS' "$T/dump.out"
}
if ! wait_for 30 seen_events; then
	show "$T/dump.out" "ljlog dump --follow (stdout)"
	show "$T/dump.err" "ljlog dump --follow (stderr)"
	fail "ljlog dump --follow showed no EVENTS block within 30 s while spin.lua ran"
fi
kill -0 "$pid" 2>/dev/null || fail "spin.lua had already ended when the first EVENTS block was seen"
kill -0 "$dpid" 2>/dev/null || fail "ljlog dump --follow ended before the program did"
ok "ljlog dump --follow showed an EVENTS block while the program was running"

touch "$T/stop"
rc=0
wait "$pid" || rc=$?
expect_eq "spin.lua exit status" 0 "$rc"
rc=0
wait "$dpid" || rc=$?
expect_eq "ljlog dump --follow exit status after the END block" 0 "$rc"
grep -q ': END' "$T/dump.out" ||
	{ show "$T/dump.out"; fail "ljlog dump --follow did not show the END block"; }
check_complete "$log"
# What follow saw is what a later reading sees.
ljlog dump "$log" >"$T/dump2.out" 2>&1 || fail "ljlog dump of the finished log failed"
cmp -s "$T/dump.out" "$T/dump2.out" ||
	{ diff "$T/dump.out" "$T/dump2.out" | head -20 >&2; fail "dump --follow and a dump of the finished log differ"; }
ok "ljlog dump --follow ended at the END block (exit 0) with the same output as a dump of the finished log"
