#!/usr/bin/env bash
# ljlog e2e: samples + dropped = timer signals delivered, counted on our own.
# A preloaded shim (sigcount.c) wraps sigaction(): it puts a counting
# trampoline in front of the SIGPROF handler ljlog installs and writes the
# number of deliveries at exit. The log's samples + samples_dropped (and
# its `signals`) must equal that number: one VM at 10 kHz on the wall clock
# (where the 64-entry signal buffer may overflow), one at the default CPU
# clock, and four VMs in four threads of the C host.
. "$(dirname "$0")/lib.sh"

# ThreadSanitizer runs a signal handler late, at the next call it
# intercepts, which LuaJIT's machine code never makes: under it ljlog takes
# a handful of samples at the wrong places, so accuracy means nothing.
case $LJLOG_TEST_PRELOAD in
*tsan*) echo "SKIP: $test_name: sampling accuracy cannot be measured under ThreadSanitizer"; exit 77 ;;
esac

shim=$top_builddir/tests/e2e/.libs/sigcount.so
[ -e "$shim" ] || fail "the shim is not built ($shim)"
preload="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$shim"

compare() { # LABEL LOG
	local label=$1 log=$2 delivered installs overruns
	read -r _ delivered _ installs _ overruns <"$T/count" || fail "[$label] the shim wrote no count"
	expect_eq "[$label] SIGPROF handlers the shim wrapped" 1 "$installs"
	check_complete "$log"
	report_json "$log" "$T/r.json"
	local got
	got=$(json_get "$T/r.json" '"%d %d %d %d" % (d["samples"], d["samples_dropped"], d["signals"], d["intervals"])')
	set -- $got
	[ "$1" -gt 0 ] || fail "[$label] no samples"
	expect_eq "[$label] samples + samples_dropped (log) vs signals delivered (shim)" "$delivered" "$(($1 + $2))"
	expect_eq "[$label] signals (log) vs signals delivered (shim)" "$delivered" "$3"
	# Each signal stands for 1 + its timer's overrun (the intervals the
	# kernel merged into it); a dropped sample loses its overrun.
	if [ "$2" -eq 0 ]; then
		expect_eq "[$label] intervals (log) vs signals + overruns (shim)" "$((delivered + overruns))" "$4"
	elif [ "$4" -lt "$1" ] || [ "$4" -gt $((delivered + overruns)) ]; then
		fail "[$label] intervals $4 outside [samples $1, signals + overruns $((delivered + overruns))]"
	fi
	ok "[$label] $delivered signals delivered = $1 samples + $2 dropped; $4 intervals ($overruns overruns)"
}

lua_run() { # LABEL OPTIONS ARGS...
	local label=$1 opts=$2 log=$T/sig.ljlog rc=0
	shift 2
	rm -f "$log" "$T/count"
	LUAJIT_PROFILE="log:file=$log,$opts" LUA_CPATH="$MODDIR/?.so;;" \
		LJLOG_SIGCOUNT_FILE=$T/count timeout "$E2E_TIMEOUT" \
		env LD_PRELOAD="$preload" "$LUAJIT" -lljlog "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/err"; fail "[$label] the profiled run exited with $rc"; }
	compare "$label" "$log"
}

lua_run "10 kHz wall clock" "sample=100us,wall" "$E2E/sample_split.lua" on 60
lua_run "10 kHz wall clock, JIT off, no host stacks" "sample=100us,wall,nohost" "$E2E/sample_split.lua" off 20
lua_run "CPU clock" "sample=1ms" "$E2E/sample_split.lua" on 60

log=$T/sig.ljlog
rm -f "$log" "$T/count"
LJLOG_SIGCOUNT_FILE=$T/count timeout "$E2E_TIMEOUT" env LD_PRELOAD="$preload" \
	"$HOST" --threads 4 --script "$E2E/sample_thread.lua" \
	--options "file=$log,sample=100us,wall" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "[4 threads] the host failed"; }
compare "4 VMs in 4 threads, 10 kHz wall clock" "$log"

# The time the samples stand for against the thread's own CPU time: at
# sample=1ms a CPU-time timer fires at the kernel's tick (4 ms at 250 Hz),
# so the signals alone would count a quarter of it. The program reads its
# thread's CPU time at the end; the samples began at attach, a little
# before the program's first line, and ended with it: intervals x 1 ms must
# be that time within 10% (and a few ticks).
log=$T/cpu.ljlog
LUAJIT_PROFILE="log:file=$log,sample=1ms" LUA_CPATH="$MODDIR/?.so;;" \
	timeout "$E2E_TIMEOUT" env ${LJLOG_TEST_PRELOAD:+LD_PRELOAD="$LJLOG_TEST_PRELOAD"} \
	"$LUAJIT" -lljlog "$E2E/cputime.lua" 1 >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "[thread CPU time] the profiled run failed"; }
check_complete "$log"
report_json "$log" "$T/r.json"
read -r cpu_ns _ <"$T/out"
got=$(json_get "$T/r.json" '"%d %d %d" % (d["samples"], d["intervals"], d["interval_ns"])')
set -- $got
expect_eq "[thread CPU time] interval_ns" 1000000 "$3"
python3 - "$cpu_ns" "$1" "$2" "$3" <<'PY' || fail "[thread CPU time] intervals x interval is not the thread's CPU time"
import sys
cpu, samples, intervals, iv = (int(x) for x in sys.argv[1:5])
got = intervals * iv
slack = 0.10 * cpu + 4 * 4000000
print(f"thread CPU {cpu / 1e6:.1f} ms; {samples} samples stand for {intervals} intervals: {got / 1e6:.1f} ms")
sys.exit(0 if abs(got - cpu) <= slack else 1)
PY
ok "[thread CPU time] $2 intervals of 1 ms in $1 samples: the thread's $((cpu_ns / 1000000)) ms"
