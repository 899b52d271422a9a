#!/usr/bin/env bash
# ljlog e2e: sampling traps at 10 kHz (sample=100us,wall). Each program runs
# unprofiled and profiled: no crash, the same output, `ljlog check` exit 0,
# samples present (and in the places the trap is about):
#  (a) Lua stacks being reallocated: deep recursion, stack overflow caught
#      by pcall, coroutines with deep stacks, stacks shrunk by the GC
#  (b) fast functions mid-call: pcall, xpcall, select, unpack, string.byte,
#      setmetatable, tostring, next, coroutine.wrap in tight loops
#  (c) the interpreter with the JIT off (its base and PC in registers, not
#      yet in memory): (a) and (b) again with jit.off()
#  (d) C host threads running no Lua while sampled: C work and sleeps
#      between lua_pcall()s (sample_host): samples in state idle or c,
#      with host stacks naming the host's functions
#  (e) unwinding into JIT machine code: hot traces calling libm, the FFI
#      (a test library, libc)
#  (f) trace recording, compiling and flushing: jit.flush() in a loop while
#      hot loops are recompiled, with trace events on (`jit`)
# Every trap runs even when an earlier one failed; the test fails at the
# end, naming each trap that failed. Under LJLOG_TEST_PRELOAD (ASan) the
# module is sanitized; luajit itself is not.
. "$(dirname "$0")/lib.sh"

# ThreadSanitizer runs a signal handler late, at the next call it
# intercepts, which LuaJIT's machine code never makes: under it ljlog takes
# a handful of samples at the wrong places. Checks that need samples in
# the right places are then left out (the rest, and TSan's own, remain).
tsan=
case $LJLOG_TEST_PRELOAD in *tsan*) tsan=1 ;; esac

libs=$top_builddir/tests/e2e/.libs
SHOST=$top_builddir/tests/e2e/sample_host
rate=${SAMPLE_TRAPS_OPTS:-sample=100us,wall}
failed=

# run_lua LABEL OPTIONS PROG ARGS...: unprofiled and profiled runs, same
# output, exit 0, complete log, samples present. Leaves $T/trap.ljlog and
# $T/trap.json.
run_lua() {
	local label=$1 opts=$2 log=$T/trap.ljlog rc=0
	shift 2
	rm -f "$log"
	luajit "$@" >"$T/plain.out" 2>"$T/plain.err" ||
		{ show "$T/plain.err"; fail "[$label] the unprofiled run failed"; }
	profile "file=$log,$opts" "$@" >"$T/out" 2>"$T/err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		show "$T/err"
		fail "[$label] the profiled run exited with status $rc$([ "$rc" -gt 128 ] && echo " (signal $((rc - 128)))")"
	fi
	cmp -s "$T/plain.out" "$T/out" ||
		fail "[$label] output '$(head -c 200 "$T/out")', unprofiled '$(head -c 200 "$T/plain.out")'"
	check_complete "$log"
	report_json "$log" "$T/trap.json"
	[ "$(json_get "$T/trap.json" 'd["samples"] > 0')" = true ] || fail "[$label] no samples"
}

# expect_py LABEL EXPR WHAT: a json_get expression over $T/trap.json is true.
expect_py() {
	[ "$(json_get "$T/trap.json" "$2")" = true ] ||
		fail "[$1] $3: $(json_get "$T/trap.json" '{"samples": d["samples"], "states": d["states"]}')"
}

# lua_samples FILE NAME: samples_total of FILE's "local function NAME(".
lua_samples() {
	local line
	line=$(grep -n "^local function $2(" "$1" | cut -d: -f1)
	[ -n "$line" ] || fail "no function $2 in $1"
	json_get "$T/trap.json" "sum(f[\"samples_total\"] for f in d[\"functions\"] if f[\"kind\"] == \"lua\" and f[\"file\"] == \"$1\" and f[\"line\"] == $line)"
}

trap_a() { # JIT
	local p=$E2E/sample_trap_deep.lua label="(a) stacks reallocated, jit $1"
	run_lua "$label" "$rate" "$p" 300 "$1"
	local n m
	[ -z "$tsan" ] || { ok "[$label] $(json_get "$T/trap.json" 'd["samples"]') samples (TSan)"; return 0; }
	n=$(lua_samples "$p" deep)
	m=$(lua_samples "$p" co_deep)
	[ "$n" -gt 0 ] && [ "$m" -gt 0 ] ||
		fail "[$label] samples with deep() on the Lua stack: $n, with co_deep(): $m; want some of each"
	ok "[$label] $(json_get "$T/trap.json" 'd["samples"]') samples, $n in deep(), $m in co_deep()"
}

trap_b() { # JIT
	local label="(b) fast functions, jit $1"
	run_lua "$label" "$rate" "$E2E/sample_trap_fast.lua" 100 "$1"
	ok "[$label] $(json_get "$T/trap.json" 'd["samples"]') samples"
}

trap_d() {
	local label="(d) host threads outside Lua" log=$T/trap.ljlog rc=0
	local args="--threads 2 --script $E2E/sample_trap_host.lua --rounds 20 --cwork 10 --sleep 10"
	[ -x "$SHOST" ] || fail "[$label] $SHOST is not built"
	rm -f "$log"
	# shellcheck disable=SC2086
	timeout "$E2E_TIMEOUT" "$SHOST" $args >"$T/plain.out" 2>"$T/plain.err" ||
		{ show "$T/plain.err"; fail "[$label] the unprofiled host failed"; }
	# shellcheck disable=SC2086
	timeout "$E2E_TIMEOUT" "$SHOST" $args --options "file=$log,$rate" \
		>"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/err"; fail "[$label] the profiled host exited with status $rc"; }
	grep 'result' "$T/plain.out" >"$T/plain.res"
	grep 'result' "$T/out" >"$T/res"
	[ -s "$T/res" ] && cmp -s "$T/plain.res" "$T/res" ||
		fail "[$label] results '$(cat "$T/res")', unprofiled '$(cat "$T/plain.res")'"
	[ "$(grep -c 'attached 1' "$T/out")" = 2 ] || { show "$T/out"; fail "[$label] not every thread attached"; }
	check_complete "$log"
	report_json "$log" "$T/trap.json"
	expect_py "$label" 'd["states"]["idle"] + d["states"]["c"] > 0' "no samples in state idle or c"
	ljlog folded "$log" >"$T/folded" 2>"$T/folded.err" ||
		{ show "$T/folded.err"; fail "[$label] ljlog folded failed"; }
	# Under TSan the signal is handled in TSan's interceptors, late.
	[ -z "$tsan" ] || { ok "[$label] $(json_get "$T/trap.json" 'd["samples"]') samples (TSan)"; return 0; }
	python3 - "$T/folded" "$label" <<'PY' || fail "[$label] host stacks outside Lua (see above)"
import re, sys
fpath, label = sys.argv[1:]
seen = {"sample_host_cspin": 0, "sample_host_sleep": 0}
bad = []
for ln in open(fpath):
    stack, n = ln.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    for name in seen:
        if name in frames:
            seen[name] += int(n)
            lua = [f for f in frames if re.search(r"\.lua:\d+$|^main_chunk_\(", f)]
            if lua:
                bad.append("%s under Lua frames %r" % (name, lua))
for name, n in seen.items():
    if n == 0:
        bad.append("no sample names %s in its host stack" % name)
if bad:
    sys.exit("[%s] %s" % (label, "; ".join(bad[:5])))
print("ok: sample_traps: [%s] host stacks: %s" % (label, ", ".join("%s %d" % kv for kv in seen.items())))
PY
	ok "[$label] $(json_get "$T/trap.json" '"%d samples, idle %d, c %d" % (d["samples"], d["states"]["idle"], d["states"]["c"])')"
}

# Under qemu-user (e) took 100 s and (f) 70 s of the test's 256: a quarter
# and a third of the work there (the checks want a sample in compiled code,
# and one while a trace is made; they had hundreds).
e_n=400 f_n=3000
! emulated || e_n=100 f_n=1000

trap_e() {
	local label="(e) C called from traces"
	[ -e "$libs/sample_ffi.so" ] || fail "[$label] $libs/sample_ffi.so is not built"
	run_lua "$label" "$rate" "$E2E/sample_trap_mcode.lua" "$libs/sample_ffi.so" "$e_n"
	[ -n "$tsan" ] || expect_py "$label" 'd["states"]["trace"] > 0' "no samples in compiled code"
	ok "[$label] $(json_get "$T/trap.json" '"%d samples, %d in traces" % (d["samples"], d["states"]["trace"])')"
}

trap_f() {
	local label="(f) trace recording and flushing"
	run_lua "$label" "$rate,jit" "$E2E/sample_trap_flush.lua" "$f_n"
	expect_py "$label" 'd["trace_flushes"] > 0' "no trace flush in the log"
	[ -n "$tsan" ] || expect_py "$label" 'd["states"]["record"] + d["states"]["opt"] + d["states"]["asm"] > 0' \
		"no samples while recording, optimising or assembling a trace"
	ok "[$label] $(json_get "$T/trap.json" '"%d samples, record %d, opt %d, asm %d, %d flushes" % (d["samples"], d["states"]["record"], d["states"]["opt"], d["states"]["asm"], d["trace_flushes"])')"
}

for t in "a on" "a off" "b on" "b off" "d" "e" "f"; do
	t0=$SECONDS
	# shellcheck disable=SC2086
	(trap_$t) || failed="$failed${failed:+,} ($t)"
	echo "sample_traps: ($t) took $((SECONDS - t0)) s"
done
[ -z "$failed" ] || fail "traps failed:$failed (the (c) runs are the 'off' ones)"
ok "all traps: no crash, same output, complete logs, samples"
