#!/usr/bin/env bash
# ljlog e2e: stopping leaves nothing behind; a program's own SIGPROF.
# 1. sample_stop.lua starts ljlog sampling (sample=100us,wall) from Lua,
#    stops it, starts and stops again, with busy work before, between and
#    for a while after. Under the sigcount shim (which counts the SIGPROF
#    deliveries to ljlog's handler): no crash, the same result as without
#    the shim, both logs complete, and every signal delivered is in a log
#    (samples + dropped of the two logs): none came after a stop. No
#    thread of ljlog's is left once sampling stopped.
# 2. sample_clash.lua: a program that handles SIGPROF itself, with
#    jit.profile (LuaJIT's own profiler) or a C module's handler and timer,
#    then asks ljlog to sample: one clear line on stderr about the clash,
#    the program runs on with its result, and its own handler keeps its
#    signals. And the other way round: ljlog samples first (LUAJIT_PROFILE),
#    the program starts and stops jit.profile: one line, the program runs
#    on, the log is complete and has samples.
. "$(dirname "$0")/lib.sh"

# ThreadSanitizer runs a signal handler late, at the next call it
# intercepts, which LuaJIT's machine code never makes: under it ljlog takes
# a handful of samples at the wrong places. Checks that need samples in
# the right places are then left out (the rest, and TSan's own, remain).
tsan=
case $LJLOG_TEST_PRELOAD in *tsan*) tsan=1 ;; esac

shim=$top_builddir/tests/e2e/.libs/sigcount.so
cmod=$top_builddir/tests/e2e/.libs/sample_cmod.so
[ -e "$shim" ] && [ -e "$cmod" ] || fail "test libraries not built ($shim, $cmod)"
preload="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$shim"

# -- 1. start, stop, start, stop, run on ---------------------------------------
leftover=
for jit in on off; do
	label="stop, jit $jit"
	rm -f "$T/s1.ljlog" "$T/s2.ljlog" "$T/count"
	rc=0
	luajit "$E2E/sample_stop.lua" "$T/p1.ljlog" "$T/p2.ljlog" "$jit" \
		>"$T/plain.out" 2>"$T/plain.err" || { show "$T/plain.err"; fail "[$label] the reference run failed"; }
	LUA_CPATH="$MODDIR/?.so;;" LJLOG_SIGCOUNT_FILE=$T/count timeout "$E2E_TIMEOUT" \
		env LD_PRELOAD="$preload" "$LUAJIT" "$E2E/sample_stop.lua" "$T/s1.ljlog" "$T/s2.ljlog" "$jit" \
		>"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/err"; fail "[$label] exited with status $rc"; }
	cmp -s "$T/plain.out" "$T/out" ||
		fail "[$label] result '$(cat "$T/out")', reference run '$(cat "$T/plain.out")'"
	grep -v '^threads ' "$T/err" >"$T/err.rest" || true
	[ ! -s "$T/err.rest" ] || { show "$T/err.rest"; fail "[$label] unexpected messages on stderr"; }
	n=0
	for log in "$T/s1.ljlog" "$T/s2.ljlog"; do
		check_complete "$log"
		report_json "$log" "$T/r.json"
		s=$(json_get "$T/r.json" 'd["samples"] + d["samples_dropped"]')
		[ "$(json_get "$T/r.json" 'd["samples"]')" -gt 0 ] || fail "[$label] $log has no samples"
		n=$((n + s))
	done
	read -r _ delivered _ installs _ <"$T/count" || fail "[$label] the shim wrote no count"
	[ "$installs" -ge 1 ] || fail "[$label] the shim saw no SIGPROF handler installed"
	# Under TSan the shim counts the kernel's deliveries to TSan's own
	# handler, which may merge several before ljlog's runs.
	[ -n "$tsan" ] ||
		expect_eq "[$label] SIGPROF delivered (shim) vs samples + dropped in the two logs" "$delivered" "$n"
	ok "[$label] two start/stop cycles, busy work after: $delivered signals delivered, $n in the logs"
	read -r _ before during after <<<"$(grep '^threads ' "$T/err")"
	[ "$before" -ge 1 ] && [ "$during" -ge 1 ] && [ "$after" -ge 1 ] 2>/dev/null ||
		fail "[$label] sample_stop.lua printed threads before/during/after '$before $during $after'"
	# Checked last (below), after everything else has had its say. Not
	# under TSan, whose own background thread comes and goes.
	[ "$after" = "$before" ] || [ -n "$tsan" ] ||
		leftover="$leftover${leftover:+; }[$label] threads: $before before sampling, $during while sampling, $after after the last stop"
done

# -- 2. a program with its own SIGPROF handler -----------------------------------
luajit "$E2E/sample_clash.lua" none >"$T/none.out" 2>&1 ||
	{ show "$T/none.out"; fail "[clash] the reference run failed"; }
want=$(grep '^result' "$T/none.out")

clash_check() { # LABEL
	local label=$1
	[ "$(grep '^result' "$T/out")" = "$want" ] ||
		fail "[$label] '$(grep '^result' "$T/out")', reference '$want'"
	# Under TSan, jit.profile's handler runs too late for its samples.
	[ -n "$tsan" ] ||
		expect_eq "[$label] the program's own handler got signals" "own	N" "$(grep '^own' "$T/out")"
	grep -i 'ljlog' "$T/err" >"$T/msgs" || true
	[ "$(wc -l <"$T/msgs")" -eq 1 ] && grep -q 'SIGPROF' "$T/msgs" ||
		{ show "$T/err"; fail "[$label] expected one ljlog line about SIGPROF on stderr, got $(wc -l <"$T/msgs")"; }
}

for mode in jitprofile cmod; do
	label="clash: $mode first, then ljlog.start"
	rm -f "$T/clash.ljlog"
	luajit "$E2E/sample_clash.lua" "$mode" "$T/clash.ljlog" "$cmod" >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "[$label] the program failed"; }
	clash_check "$label"
	ok "[$label] ran on; its handler kept its signals; said: $(cat "$T/msgs")"
done

label="clash: ljlog first, then jit.profile"
log=$T/late.ljlog
rm -f "$log"
profile "file=$log,sample=250us,wall" "$E2E/sample_clash.lua" late >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "[$label] the program failed"; }
clash_check "$label"
check_complete "$log"
report_json "$log" "$T/r.json"
[ "$(json_get "$T/r.json" 'd["samples"]')" -gt 0 ] || fail "[$label] no samples"
ok "[$label] ran on, log complete with samples; said: $(cat "$T/msgs")"

[ -z "$leftover" ] || fail "$leftover (ljlog's helper thread is still there)"
ok "no ljlog thread left after stop"
