#!/usr/bin/env bash
# ljlog e2e: `ljlog top`, the live view.
# (1) A finished log: `top --once` and plain `top` (not a terminal) print
#     one final frame whose per-function calls, samples and allocated bytes
#     equal `ljlog report --json`'s, for each sort key; with calls (JIT off)
#     the calls of top.lua's functions are the program's known N; --sort
#     calls orders by calls; on a log of samples only, only the sample
#     columns (none for calls, time or allocations); times carry units.
# (2) Live: spin.lua writes its log until told to stop; `top -d 0.2` prints
#     live frames while it runs (one shows spin.lua's work() with calls; sorted by time:
#     under ThreadSanitizer work() may have no sample),
#     then, after the END block, a final frame equal to the report, and
#     exits 0 by itself.
# (3) Errors: missing file, usage, truncated and corrupt logs.
. "$(dirname "$0")/lib.sh"

FRAME="python3 $E2E/top_frame.py"

# -- (1) A finished log -----------------------------------------------------------
n=20000
log=$T/top.ljlog
profile "file=$log,calls,sample,alloc" "$E2E/top.lua" $n >"$T/prog.out" 2>"$T/prog.err" ||
	{ show "$T/prog.err"; fail "top.lua failed under the profiler"; }
grep -q "^top.lua $n " "$T/prog.out" || { show "$T/prog.out"; fail "top.lua did not finish"; }
check_complete "$log"
report_json "$log" "$T/r.json"

for sort in samples time alloc; do
	rc=0
	ljlog top --once -n 0 --sort $sort "$log" >"$T/once.$sort" 2>"$T/once.err" || rc=$?
	expect_eq "top --once --sort $sort exit status" 0 "$rc"
	expect_eq "top --once --sort $sort frames" 1 "$($FRAME "$T/once.$sort" "$T/r.json" count)"
	$FRAME "$T/once.$sort" "$T/r.json" >"$T/cmp.out" 2>&1 ||
		{ show "$T/once.$sort"; show "$T/cmp.out"; fail "top --once --sort $sort differs from the report"; }
	ok "top --once --sort $sort: $(cat "$T/cmp.out")"
done

# The independent count: leaf and spin are each called N times.
for f in leaf spin; do
	got=$(awk -F '  +' -v f="$f" '$NF ~ "^" f " \\(.*top\\.lua:" { print $(NF - 1) }' "$T/once.time")
	expect_eq "calls of $f in top --once (top.lua called it $n times)" "$n" "$got"
done
ok "top --once: leaf and spin have the $n calls top.lua made"

# --sort calls: rows by calls, as the report counts them.
ljlog top --once -n 0 --sort calls "$log" >"$T/once.calls" 2>"$T/once.err" ||
	{ show "$T/once.err"; fail "top --once --sort calls failed"; }
$FRAME "$T/once.calls" "$T/r.json" >"$T/cmp.out" 2>&1 ||
	{ show "$T/once.calls"; show "$T/cmp.out"; fail "top --once --sort calls differs from the report"; }
got=$(awk -F '  +' '/function$/ { on = 1; next } on && NF > 2 { print $(NF - 1) }' "$T/once.calls" | tr '\n' ' ')
sorted=$(printf '%s\n' $got | sort -rn | tr '\n' ' ')
[ -n "$got" ] || { show "$T/once.calls"; fail "top --sort calls: no rows with calls"; }
expect_eq "top --sort calls: calls in order" "$sorted" "$got"
ok "top --once --sort calls: $(cat "$T/cmp.out"), in order of calls"

# A log of samples only: no calls, self time or alloc columns (the frame
# check compares the columns with what the log recorded).
slog=$T/smp.ljlog
profile "file=$slog,nodefaults,sample=1ms,wall" "$E2E/report.lua" >/dev/null 2>"$T/smp.err" ||
	{ show "$T/smp.err"; fail "report.lua failed under the profiler (samples)"; }
report_json "$slog" "$T/smp.json"
ljlog top --once -n 0 "$slog" >"$T/once.smp" 2>"$T/once.err" ||
	{ show "$T/once.err"; fail "top --once on a sample log failed"; }
$FRAME "$T/once.smp" "$T/smp.json" >"$T/cmp.out" 2>&1 ||
	{ show "$T/once.smp"; show "$T/cmp.out"; fail "top on a sample log differs from the report"; }
grep -q '^ *smp.last  *smp.total  function$' "$T/once.smp" ||
	{ show "$T/once.smp"; fail "top on a sample log: heading is not 'smp.last smp.total function'"; }
ok "top on a sample log: only sample columns; $(cat "$T/cmp.out")"

# Plain `top` on a finished log, not a terminal: one final frame, exit 0.
rc=0
ljlog top -n 0 "$log" >"$T/plain.out" 2>"$T/plain.err" || rc=$?
expect_eq "top on a finished log: exit status" 0 "$rc"
$FRAME "$T/plain.out" "$T/r.json" >"$T/cmp.out" 2>&1 ||
	{ show "$T/plain.out"; show "$T/cmp.out"; fail "top on a finished log differs from the report"; }
grep -q $'\033' "$T/plain.out" && fail "top wrote terminal escapes to a file"
ok "top on a finished log (stdout a file): $(cat "$T/cmp.out"), no escapes"

# -- (2) Live ------------------------------------------------------------------------
live=$T/live.ljlog
rm -f "$T/stop"
profile_bg "file=$live,calls,sample,flush=50ms" "$E2E/spin.lua" "$T/stop" 120 >"$T/spin.out" 2>"$T/spin.err"
pid=$BG_PID
wait_for 30 test -s "$live" || fail "spin.lua did not create $live"
timeout "$E2E_TIMEOUT" "$LJLOG" top -d 0.2 -n 0 --sort time "$live" >"$T/live.out" 2>"$T/live.err" &
tpid=$!
track_pid "$tpid"
# Two frames, a live one showing work() with calls (awk: cheap to poll).
two_live() {
	awk '/^== frame / { n++; live = /\(live\)/ }
	     live && $NF ~ /^work / && $(NF - 1) > 0 { seen = 1 }
	     END { exit !(n >= 2 && seen) }' FS='  +' "$T/live.out"
}
if ! wait_for 60 two_live; then
	show "$T/live.out" "ljlog top -d 0.2 (stdout)"
	show "$T/live.err" "ljlog top -d 0.2 (stderr)"
	fail "ljlog top printed no 2 frames with work()'s calls within 60 s while spin.lua ran"
fi
kill -0 "$pid" 2>/dev/null || fail "spin.lua had ended before top printed 2 live frames"
kill -0 "$tpid" 2>/dev/null || fail "ljlog top ended before the program did"
frames_live=$($FRAME "$T/live.out" - count)
ok "ljlog top printed $frames_live frames while spin.lua ran, one with work()'s calls"
# --once on the log being written: the log so far, "live", exit 0, no
# warning (issue 38, 10: it said truncated and exited 1).
rc=0
ljlog top --once -n 0 "$live" >"$T/once.live" 2>"$T/once.live.err" || rc=$?
kill -0 "$pid" 2>/dev/null || fail "spin.lua had ended before top --once ran"
expect_eq "top --once on a log being written: exit status" 0 "$rc"
grep -q "^ljlog top: .*live.ljlog (live)\$" "$T/once.live" ||
	{ show "$T/once.live"; fail "top --once on a log being written: no '(live)' header"; }
[ ! -s "$T/once.live.err" ] || { show "$T/once.live.err"; fail "top --once on a log being written: a warning"; }
ok "top --once on the log being written: one live frame, exit 0"

touch "$T/stop"
rc=0
wait "$pid" || rc=$?
expect_eq "spin.lua exit status" 0 "$rc"
rc=0
wait "$tpid" || rc=$?
expect_eq "ljlog top exit status after the END block" 0 "$rc"
check_complete "$live"
report_json "$live" "$T/live.json"
$FRAME "$T/live.out" "$T/live.json" >"$T/cmp.out" 2>&1 ||
	{ tail -40 "$T/live.out" >&2; show "$T/cmp.out"; fail "top's last frame differs from the finished log's report"; }
ok "ljlog top ended by itself (exit 0) after END; last frame: $(cat "$T/cmp.out")"

# -- (3) Errors ----------------------------------------------------------------------
rc=0
ljlog top "$T/nonexistent.ljlog" >"$T/out" 2>"$T/err" || rc=$?
expect_eq "missing file: exit status" 2 "$rc"
grep -q "ljlog top: .*nonexistent.ljlog" "$T/err" || { show "$T/err"; fail "missing file: not named"; }
rc=0
ljlog top -d zero "$log" >"$T/out" 2>"$T/err" || rc=$?
expect_eq "top -d zero: exit status" 2 "$rc"
rc=0
ljlog top --sort bogus "$log" >"$T/out" 2>"$T/err" || rc=$?
expect_eq "top --sort bogus: exit status" 2 "$rc"
rc=0
ljlog top --help >"$T/out" 2>&1 || rc=$?
expect_eq "top --help: exit status" 0 "$rc"
grep -q "^usage: ljlog top" "$T/out" || fail "top --help: no usage"
ok "top: missing file and bad options exit 2, --help 0"

# Truncated: the writer (that pid) is gone; --once and follow both end with
# a final frame, a warning and exit 1.
size=$(stat -c %s "$log")
head -c $((size * 2 / 3)) "$log" >"$T/cut.ljlog"
for mode in --once ""; do
	rc=0
	ljlog top $mode "$T/cut.ljlog" >"$T/out" 2>"$T/err" || rc=$?
	expect_eq "truncated log (top $mode): exit status" 1 "$rc"
	grep -q "warning: " "$T/err" || { show "$T/err"; fail "truncated log (top $mode): no warning"; }
	grep -q "^== frame [0-9]* (truncated) ==" "$T/out" || { show "$T/out"; fail "truncated log (top $mode): no final frame"; }
done
grep -q "is gone" "$T/err" || { show "$T/err"; fail "truncated log (top): the gone writer not named"; }
ok "a truncated log: final frame, warning, exit 1 (--once and follow)"

python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0xff
open(sys.argv[2], "wb").write(b)' "$log" "$T/bad.ljlog"
rc=0
ljlog top "$T/bad.ljlog" >"$T/out" 2>"$T/err" || rc=$?
expect_eq "corrupt log: exit status" 3 "$rc"
grep -q "corrupt log, showing the part before: block" "$T/err" ||
	{ show "$T/err"; fail "corrupt log: no message naming the block"; }
grep -q "^== frame [0-9]* (corrupt) ==" "$T/out" || { show "$T/out"; fail "corrupt log: no final frame"; }
ok "a corrupt log: final frame of the part before, exit 3"
