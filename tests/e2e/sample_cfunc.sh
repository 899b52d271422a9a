#!/usr/bin/env bash
# ljlog e2e: C functions by name in merged sampled stacks.
# sample_cfunc.lua calls a busy C function through the FFI (via_ffi ->
# ljlog_test_ffi_spin in sample_ffi.so) and a busy lua_CFunction through
# the C API (via_api -> sample_cmod.spin). In `ljlog folded` (Lua and host
# frames merged), with the JIT on, nearly every sample in either C function
# must show it directly above (right of) its Lua caller; only a "trace N"
# frame may sit between them. With the JIT off, the FFI call goes through
# LuaJIT's own C code (the cdata call, lj_ccall): the C function must still
# be above via_ffi in the same stack; the lua_CFunction directly above.
. "$(dirname "$0")/lib.sh"

# ThreadSanitizer runs a signal handler late, at the next call it
# intercepts, which LuaJIT's machine code never makes: under it ljlog takes
# a handful of samples at the wrong places, so accuracy means nothing.
case $LJLOG_TEST_PRELOAD in
*tsan*) echo "SKIP: $test_name: sampling accuracy cannot be measured under ThreadSanitizer"; exit 77 ;;
esac

prog=$E2E/sample_cfunc.lua
libs=$top_builddir/tests/e2e/.libs
[ -e "$libs/sample_ffi.so" ] && [ -e "$libs/sample_cmod.so" ] ||
	fail "test libraries not built ($libs/sample_ffi.so, sample_cmod.so)"
ffi_line=$(grep -n '^local function via_ffi(' "$prog" | cut -d: -f1)
api_line=$(grep -n '^local function via_api(' "$prog" | cut -d: -f1)
[ -n "$ffi_line" ] && [ -n "$api_line" ] || fail "no via_ffi or via_api in $prog"

run() { # JIT ROUNDS
	local jit=$1 rounds=$2 log=$T/cfunc.ljlog
	rm -f "$log"
	luajit "$prog" "$libs/sample_ffi.so" "$libs/sample_cmod.so" "$rounds" "$jit" \
		>"$T/plain.out" 2>&1 || { show "$T/plain.out"; fail "[jit $jit] the unprofiled run failed"; }
	profile "file=$log,sample=250us,wall" "$prog" "$libs/sample_ffi.so" \
		"$libs/sample_cmod.so" "$rounds" "$jit" >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "[jit $jit] the profiled run failed"; }
	cmp -s "$T/plain.out" "$T/out" ||
		fail "[jit $jit] output '$(cat "$T/out")', unprofiled '$(cat "$T/plain.out")'"
	check_complete "$log"
	ljlog folded "$log" >"$T/folded" 2>"$T/folded.err" ||
		{ show "$T/folded.err"; fail "[jit $jit] ljlog folded failed"; }
	python3 - "$T/folded" "$prog:$ffi_line" "$prog:$api_line" "$jit" <<'PY' || { show "$T/folded"; fail "[jit $jit] C functions not above their Lua callers (see above)"; }
import re, sys
fpath, via_ffi, via_api, jit = sys.argv[1:]
stacks = []
for ln in open(fpath):
    stack, n = ln.rstrip("\n").rsplit(" ", 1)
    stacks.append((stack.split(";"), int(n)))

def same(frame, caller):
    """A folded frame is the Lua function at chunk:line caller: unnamed,
    or named ("NAME_(chunk:line)", '_' for ' ')."""
    return frame == caller or frame.endswith("_(%s)" % caller)

def above(frames, i, caller, direct):
    """Frame i is above caller: directly (only "trace N" frames between)
    or anywhere outside it in the same stack."""
    j = i - 1
    while j >= 0 and (re.fullmatch(r"trace \d+", frames[j]) or not direct):
        if same(frames[j], caller):
            return True
        j -= 1
    return j >= 0 and same(frames[j], caller)

bad = []
for cnames, caller, direct in (
        (("ljlog_test_ffi_spin",), via_ffi, jit == "on"),
        (("sample_cmod.spin", "sample_cmod_spin"), via_api, True)):
    seen = good = 0
    for frames, n in stacks:
        idx = [i for i, f in enumerate(frames) if f in cnames]
        if not idx:
            continue
        seen += n
        if above(frames, idx[-1], caller, direct):
            good += n
    what = "%s %s %s" % (cnames[0], "directly above" if direct else "above", caller.rsplit("/", 1)[-1])
    if good < 100 or good < 0.9 * seen:
        bad.append("%s: %d of %d samples in it (want >= 90%%, >= 100)" % (what, good, seen))
    else:
        print("ok: sample_cfunc: [jit %s] %s: %d of %d samples" % (jit, what, good, seen))
if bad:
    sys.exit("[jit %s] %s" % (jit, "; ".join(bad)))
PY
}

run on 250
run off 100
