#!/usr/bin/env bash
# ljlog e2e: ljlog's triggers never touch the program's hook from another
# thread. hookstress.lua counts its own calls with debug.sethook while the
# JIT records and runs traces and __gc finalizers fire; ljlog's triggers
# are fired hard: snapshot=1ms, SIGUSR1 bursts from another process, and
# the default families' looks for names. The hook's count must equal the
# unprofiled run's, and no trigger may be lost: after the bursts, each
# further signal gives a snapshot, and the interval goes on giving them.
# With a LuaJIT built from the same source tree with its own assertions
# (LUA_USE_ASSERT, LUA_USE_APICHECK; tests/tools/luajit-assert.sh builds it
# once per tree), the same runs raise none.
# Env: HOOKSTRESS_ROUNDS rounds of 1,000,000 calls per run (default 2; 1
# under emulation).
. "$(dirname "$0")/lib.sh"

if emulated; then
	rounds=${HOOKSTRESS_ROUNDS:-1}
else
	rounds=${HOOKSTRESS_ROUNDS:-2}
fi

# snapshots LOG: how many `ljlog heap --json` lists (0 while unreadable).
snapshots() {
	$LJLOG heap --json "$1" 2>/dev/null |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["snapshots"]))' 2>/dev/null || echo 0
}

# more_than LOG N: the log lists more than N snapshots (for wait_for).
more_than() {
	[ "$(snapshots "$1")" -gt "$2" ]
}

# burst PID: SIGUSR1 to PID 20 times, as fast as kill goes.
burst() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		kill -USR1 "$1" 2>/dev/null || return 0
	done
}

# stress WHAT OPTIONS: run hookstress.lua profiled with OPTIONS (in the
# background, with READY and STOP), sending SIGUSR1 bursts while its
# rounds run (when OPTIONS name SIGUSR1); then each further signal (or the
# interval) must give a snapshot. Its count must be $want.
stress() {
	local what=$1 opts=$2 log=$T/stress.ljlog k s rc=0
	rm -f "$log" "$T/ready" "$T/stop" "$T/started"
	profile_bg "file=$log,$opts" "$E2E/hookstress.lua" "$rounds" "$T/ready" "$T/stop" "$T/started" \
		>"$T/out" 2>"$T/err"
	case $opts in
	*SIGUSR1*)
		# Not before ljlog's handler is in place: the log's INTRO
		# can be written before it (a signal then killed the
		# program in a loaded run, with the default families). The
		# program's first act is after -lljlog set it; /proc's SigCgt
		# cannot tell (under qemu-user it lists qemu's own handlers).
		wait_for 60 test -e "$T/started" || { show "$T/err"; fail "$what: the program did not start"; }
		while [ ! -e "$T/ready" ] && kill -0 "$BG_PID" 2>/dev/null; do
			burst "$BG_PID"
		done
		;;
	esac
	wait_for "$E2E_TIMEOUT" test -e "$T/ready" || { show "$T/err"; fail "$what: the rounds did not end"; }
	# No trigger stuck, no request lost: each signal after the bursts
	# gives one more snapshot (with an interval, that goes on giving
	# them: one more is asked for, as the signal's would not show).
	local rest=1
	case $opts in *ms*) ;; *SIGUSR1*) rest="1 2 3" ;; esac
	for k in $rest; do
		s=$(snapshots "$log")
		case $opts in *SIGUSR1*) kill -USR1 "$BG_PID" ;; esac
		wait_for 60 more_than "$log" "$s" ||
			fail "$what: no snapshot after $s (signal or interval $k after the bursts)"
	done
	touch "$T/stop"
	wait "$BG_PID" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/err"; fail "$what: exit status $rc"; }
	expect_eq "$what: the program's own hook count" "$want" "$(sed -n 's/^calls \([0-9]*\) .*/\1/p' "$T/out")"
	check_complete "$log"
	! grep -q "ljlog: snapshot" "$T/err" || { show "$T/err"; fail "$what: a snapshot failed"; }
	ok "$what: the hook counted $want calls as unprofiled; $(snapshots "$log") snapshots, none lost"
}

# all_runs: the reference count, then every trigger mix.
all_runs() {
	luajit_plain "$E2E/hookstress.lua" "$rounds" >"$T/ref" 2>"$T/ref.err" ||
		{ show "$T/ref.err"; fail "the unprofiled run failed"; }
	want=$(sed -n 's/^calls \([0-9]*\) .*/\1/p' "$T/ref")
	[ -n "$want" ] || fail "no count from the unprofiled run: $(cat "$T/ref")"
	stress "snapshot=1ms" "nodefaults,snapshot=1ms"
	stress "snapshot=SIGUSR1 bursts" "nodefaults,snapshot=SIGUSR1"
	stress "the default families, snapshot=1ms+SIGUSR1" "snapshot=1ms+SIGUSR1"
}

all_runs

# The same with LuaJIT's own assertions on (its luajit binary links
# libluajit statically; ljlog's module resolves the Lua API from it).
lja=$(sh "$top_srcdir/tests/tools/luajit-assert.sh" 2>"$T/lja.err") ||
	{ show "$T/lja.err"; fail "cannot build LuaJIT with assertions"; }
case $lja in
skip:*) echo "SKIP part: ${lja#skip: }" >&2 ;;
*)
	LUAJIT=$lja
	all_runs
	! grep -qi "assert" "$T/err" || { show "$T/err"; fail "LuaJIT's assertions"; }
	echo "ok: the same under LuaJIT built with LUA_USE_ASSERT and LUA_USE_APICHECK ($lja)"
	;;
esac
