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
	local label=$1 log=$2 delivered installs
	read -r _ delivered _ installs <"$T/count" || fail "[$label] the shim wrote no count"
	expect_eq "[$label] SIGPROF handlers the shim wrapped" 1 "$installs"
	check_complete "$log"
	report_json "$log" "$T/r.json"
	local got
	got=$(json_get "$T/r.json" '"%d %d %d" % (d["samples"], d["samples_dropped"], d["signals"])')
	set -- $got
	[ "$1" -gt 0 ] || fail "[$label] no samples"
	expect_eq "[$label] samples + samples_dropped (log) vs signals delivered (shim)" "$delivered" "$(($1 + $2))"
	expect_eq "[$label] signals (log) vs signals delivered (shim)" "$delivered" "$3"
	ok "[$label] $delivered signals delivered = $1 samples + $2 dropped"
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
