#!/usr/bin/env bash
# ljlog e2e: forked children profile on (man ljlog "FORK"). fork.lua calls
# f 100 times, forks (FFI); the child calls g NCHILD times and exits, the
# parent waits and calls f NPARENT times. The parent's log has f's
# 100 + NPARENT calls and no g; the child's own log (file=...%p: its pid;
# a fixed name: NAME.PID) is complete on its own (its VM record, every ID
# defined again) and has g's NCHILD calls and no f: the parent's buffered
# events stay the parent's. With sampling the child's log has samples of
# its own timers. A child that execs at once writes no log, and with fd=N
# the child writes nothing and the parent's log stays whole.
. "$(dirname "$0")/lib.sh"

prog=$E2E/fork.lua
np=300
nc=500

# ThreadSanitizer cannot start threads in the child of a threaded process
# ("starting new threads after multi-threaded fork is not supported"), and
# ljlog's writer thread makes the parent one: there the VMs write their
# own logs (nowriter). The other passes run the writer thread across fork.
nw=
case ${LJLOG_TEST_PRELOAD:-} in *tsan*) nw=,nowriter ;; esac

# calls LOG LINE: calls of fork.lua's function at LINE (0 when absent).
calls() {
	report_json "$1" "$T/r.json"
	json_get "$T/r.json" "sum(f['calls'] for f in d['functions'] if f['kind'] == 'lua' and f['file'].endswith('fork.lua') and f['line'] == $2)"
}

# run LABEL OPTIONS ARGS...: profile fork.lua; PARENT and CHILD are set
# from its output.
run() {
	local label=$1 o=$2 rc=0
	shift 2
	profile "$o$nw" "$prog" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/err"; fail "[$label] the program exited with status $rc"; }
	read -r _ PARENT _ CHILD _ st < <(grep '^parent ' "$T/out")
	[ -n "${CHILD:-}" ] && [ "$st" = 0 ] || { show "$T/out"; fail "[$label] no parent line or the child failed"; }
}

# -- file=...%p: a log per process -------------------------------------------------
run "%p" "file=$T/p-%p.ljlog,nodefaults,calls" $np $nc 0
check_complete "$T/p-$PARENT.ljlog"
check_complete "$T/p-$CHILD.ljlog"
expect_eq "[%p] parent: calls of f" $((100 + np)) "$(calls "$T/p-$PARENT.ljlog" 16)"
expect_eq "[%p] parent: calls of g" 0 "$(calls "$T/p-$PARENT.ljlog" 20)"
expect_eq "[%p] child: calls of g" $nc "$(calls "$T/p-$CHILD.ljlog" 20)"
expect_eq "[%p] child: calls of f" 0 "$(calls "$T/p-$CHILD.ljlog" 16)"
expect_eq "[%p] child: the INTRO's pid" "$CHILD" "$(json_get "$T/r.json" 'd["pid"]')"
expect_eq "[%p] child: VMs" 1 "$(json_get "$T/r.json" 'd["vms"]')"
json_get "$T/r.json" '[f["name"] for f in d["functions"] if f["kind"] == "lua" and f["line"] == 20][0]' | grep -q '^g (' ||
	fail "[%p] child: g is not named in the child's log"
ok "file=p-%p: parent $((100 + np)) calls of f, child $nc calls of g, each log complete on its own"

# -- A fixed name: NAME.PID, with sampling ------------------------------------------
# ThreadSanitizer cannot start threads in the child of a threaded process
# ("starting new threads after multi-threaded fork is not supported"): the
# sampler's helper thread is one, so there the child is not sampled.
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*)
	run "fixed" "file=$T/fixed.ljlog,nodefaults,calls" $np $nc 0
	check_complete "$T/fixed.ljlog.$CHILD"
	expect_eq "[fixed] child: calls of g" $nc "$(calls "$T/fixed.ljlog.$CHILD" 20)"
	ok "file=fixed.ljlog: the child writes fixed.ljlog.$CHILD (not sampled under ThreadSanitizer)"
	sampled=0
	;;
*) sampled=1 ;;
esac
[ "$sampled" = 1 ] && {
run "fixed" "file=$T/fixed.ljlog,nodefaults,calls,sample=1ms" $np $nc 0.3
check_complete "$T/fixed.ljlog"
check_complete "$T/fixed.ljlog.$CHILD"
expect_eq "[fixed] parent: calls of f" $((100 + np)) "$(calls "$T/fixed.ljlog" 16)"
expect_eq "[fixed] child: calls of g" $nc "$(calls "$T/fixed.ljlog.$CHILD" 20)"
n=$(json_get "$T/r.json" 'd["samples"]')
[ "$n" -gt 0 ] || fail "[fixed] the child's log has no samples after 0.3 s of CPU at 1 ms"
busy=$(json_get "$T/r.json" "sum(f['samples_total'] for f in d['functions'] if f['kind'] == 'lua' and f['line'] == 24)")
[ "$busy" -gt 0 ] || fail "[fixed] no sample of the child in busy()"
ok "file=fixed.ljlog: the child writes fixed.ljlog.$CHILD, with $n samples of its own ($busy in busy())"
}

# -- snapshot=INTERVAL goes on in the child -------------------------------------------
# The timer thread that asks for interval snapshots is gone with the fork:
# ljlog starts it again in the child (before, the child took none).
# The child runs until its log holds two snapshots of its own. Not under
# ThreadSanitizer (no thread starts in the child there, above).
# snaps LOG: how many heap snapshots LOG lists (0 while unreadable).
snaps() {
	$LJLOG heap --json "$1" 2>/dev/null |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["snapshots"]))' 2>/dev/null || echo 0
}
# more_snaps LOG N: LOG lists more than N heap snapshots.
more_snaps() {
	[ "$(snaps "$1")" -gt "$2" ]
}
[ "$sampled" = 1 ] && {
rm -f "$T/stop"
profile_bg "file=$T/snap-%p.ljlog,nodefaults,snapshot=20ms" "$prog" $np $nc 0 "until=$T/stop" >"$T/out" 2>"$T/err"
wait_for "$E2E_TIMEOUT" grep -q '^child ' "$T/out" || { show "$T/err"; fail "[snapshot=20ms] the child did not start"; }
CHILD=$(sed -n 's/^child //p' "$T/out")
wait_for "$E2E_TIMEOUT" more_snaps "$T/snap-$CHILD.ljlog" 1 ||
	{ touch "$T/stop"; show "$T/err"; fail "[snapshot=20ms] the child's log has $(snaps "$T/snap-$CHILD.ljlog") heap snapshots, want two or more"; }
touch "$T/stop"
rc=0
wait "$BG_PID" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "[snapshot=20ms] the program exited with status $rc"; }
check_complete "$T/snap-$CHILD.ljlog"
ok "snapshot=20ms: the forked child's log holds interval snapshots of its own"
}

# -- A child that execs at once --------------------------------------------------------
run "exec" "file=$T/x-%p.ljlog,nodefaults,calls" $np 0 0 exec
check_complete "$T/x-$PARENT.ljlog"
[ ! -e "$T/x-$CHILD.ljlog" ] || fail "[exec] a child that execs at once wrote a log"
ok "a child that execs at once writes no log"

# -- fd=N: the child writes nothing --------------------------------------------------
rc=0
profile "fd=7,nodefaults,calls$nw" "$prog" $np $nc 0 >"$T/out" 2>"$T/err" 7>"$T/fd.ljlog" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "[fd=7] the program exited with status $rc"; }
check_complete "$T/fd.ljlog"
expect_eq "[fd=7] parent: calls of f" $((100 + np)) "$(calls "$T/fd.ljlog" 16)"
expect_eq "[fd=7] calls of g (the child writes nothing)" 0 "$(calls "$T/fd.ljlog" 20)"
ok "fd=7: the parent's log is whole and the child's events are not in it"
