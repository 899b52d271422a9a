#!/usr/bin/env bash
# ljlog e2e: host stacks in a library closed while the program runs.
# sample_dlclose.lua opens sample_ffi.so with ffi.load, spends its time in
# ljlog_test_ffi_alloc, then lets LuaJIT dlclose the library, round after
# round, sampled at 10 kHz. The helper thread names the C frames while the
# loader frees the library's name and unmaps its symbols: it must read
# them only while they are there (ThreadSanitizer, in the threaded pass,
# reports a read of the loader's memory it cannot order). The program
# runs to its end with its own output, the log is complete, and the
# function is named above its Lua caller in the last round (the profiler
# stops while the library is still open).
. "$(dirname "$0")/lib.sh"

prog=$E2E/sample_dlclose.lua
lib=$top_builddir/tests/e2e/.libs/sample_ffi.so
log=$T/dlclose.ljlog
[ -e "$lib" ] || fail "test library not built ($lib)"

luajit "$prog" "$lib" 6 >"$T/plain.out" 2>&1 ||
	{ show "$T/plain.out"; fail "the unprofiled run failed"; }
profile "file=$log,sample=100us,wall,jit" "$prog" "$lib" 6 stop \
	>"$T/out" 2>"$T/err" || { show "$T/err"; fail "the profiled run failed"; }
cmp -s "$T/plain.out" "$T/out" ||
	fail "output '$(cat "$T/out")', unprofiled '$(cat "$T/plain.out")'"
check_complete "$log"
ljlog folded "$log" >"$T/folded" 2>"$T/folded.err" ||
	{ show "$T/folded.err"; fail "ljlog folded failed"; }

# ThreadSanitizer delivers signals late, at calls it intercepts: its few
# samples need not fall in the library.
want=1
case $LJLOG_TEST_PRELOAD in *tsan*) want=0 ;; esac
caller="alloc_in_c_($prog:$(grep -n '^local function alloc_in_c(' "$prog" | cut -d: -f1))"
python3 - "$T/folded" "$caller" "$want" <<'PY' || { show "$T/folded"; fail "ljlog_test_ffi_alloc misplaced or missing (see above)"; }
import sys
path, caller, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
named = bad = 0
for ln in open(path):
    stack, n = ln.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    if "ljlog_test_ffi_alloc" not in frames:
        continue
    named += int(n)
    if caller not in frames[:frames.index("ljlog_test_ffi_alloc")]:
        bad += int(n)
        print("not below %s: %s" % (caller, ln.rstrip()))
if bad or named < want:
    sys.exit("%d samples name ljlog_test_ffi_alloc, %d of them without %s below" % (named, bad, caller))
print("ok: sample_dlclose: %d samples in ljlog_test_ffi_alloc, each above %s" % (named, caller))
PY
ok "library closed while sampled: output unchanged, log complete, frames named"
