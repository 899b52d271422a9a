#!/usr/bin/env bash
# ljlog e2e: every sampled stack is a path of the exact call graph (issue
# 38, point 1, its "stack edges" oracle). For stackedges.lua (a method
# called only from one loop, inlined with its callees, a side trace in
# one of them, a tail call) and every program of the jit.profile corpus
# (tests/e2e/jitp/, scale 1): a run with calls (the JIT off) gives the
# exact call graph (`ljlog folded --calls --count`), a run with
# sample=1ms and the JIT on its sampled stacks (`ljlog folded --lua`).
# Every caller -> callee pair of Lua and builtin frames in a sampled stack
# must be an edge of the exact graph, and its outermost frame a root of it
# (stackedges.py): a stack is whole from the thread's root. A tail call
# drops the caller's frame in both views alike. Before the fix a side
# trace's outer frames were dropped (texit.c): main;Item:total;discount.
#
# Known gaps, allowed by rule, counted and printed (stackedges.py; issue
# 38 stays open for them):
# - pcall compiled into a trace keeps no frame of pcall's own (the trace's
#   snapshot has a pcall frame link, not a function), so the sampled stack
#   reads run_batch;recover where the exact one reads
#   run_batch;pcall;recover (pcall_error);
# - a sample in the interpreter's FFI call names the call ("ffi_call"),
#   the exact graph the C function called (memset; ffi_inlined).
# A walk of the Lua stack that stopped short of the thread's root gave
# the frames it had read ("select" or "coroutine.resume" alone, about 1
# sample in 4000); it now gives none (sample_signal.c, walk).
. "$(dirname "$0")/lib.sh"

case $LJLOG_TEST_PRELOAD in
*tsan*) echo "SKIP: $test_name: the samples' places cannot be relied on under ThreadSanitizer"; exit 77 ;;
esac

# edges NAME SCRIPT ARGS...: the two runs and the check.
edges() {
	local name=$1 t0=$SECONDS
	shift
	profile "file=$T/$name-c.ljlog,calls" "$@" >"$T/$name-c.out" 2>"$T/$name-c.err" ||
		{ show "$T/$name-c.err"; fail "[$name] the run with calls failed"; }
	profile "file=$T/$name-s.ljlog,sample=1ms" "$@" >"$T/$name-s.out" 2>"$T/$name-s.err" ||
		{ show "$T/$name-s.err"; fail "[$name] the sampled run failed"; }
	cmp -s "$T/$name-c.out" "$T/$name-s.out" ||
		fail "[$name] the two runs printed different results"
	ljlog folded --calls --count "$T/$name-c.ljlog" >"$T/$name-c.txt" 2>"$T/$name-c.ferr" ||
		{ show "$T/$name-c.ferr"; fail "[$name] folded --calls failed"; }
	ljlog folded --lua --no-traces "$T/$name-s.ljlog" >"$T/$name-s.txt" 2>"$T/$name-s.ferr" ||
		{ show "$T/$name-s.ferr"; fail "[$name] folded --lua failed"; }
	python3 "$E2E/stackedges.py" "$T/$name-c.txt" "$T/$name-s.txt" \
		>"$T/$name.res" 2>"$T/$name.bad" ||
		{ show "$T/$name-s.txt"; show "$T/$name.bad"; fail "[$name] sampled stacks that are no path of the exact call graph"; }
	ok "[$name] $(cat "$T/$name.res") ($((SECONDS - t0)) s)"
}

# Under qemu-user its 40,000 rounds took 159 s (the run with calls): 10,000
# there.
edges stackedges "$E2E/stackedges.lua" $(emulated && echo 10000)
# grand_total's frame under the three it inlines, every time.
awk '/Item:total|discount|taxed/ && !/grand_total/ { bad += $NF } END { exit bad > 0 }' "$T/stackedges-s.txt" ||
	{ show "$T/stackedges-s.txt"; fail "a sample of the inlined methods without grand_total"; }
# Under qemu-user a run takes 5 to 150 times as long (ffi_inlined with the
# JIT off: 105 s): there, and in the passes that repeat the suite
# (reduced), the cases of compiled code jitp.sh keeps (an inlined callee,
# side traces, an exit mid-loop, a 3:1 split). The split is split_table's:
# Debian's arm64 LuaJIT computes split_jit's sum other than its
# interpreter (x=123216 with the JIT on, 968067 off, unprofiled), and the
# two runs' outputs are compared. Under qemu-user only split_table (11 s
# there): stackedges.lua above has an inlined callee and a side trace
# (mid_exit took 145 s there, inline_then_own 78, side_traces 60).
progs=$(ls "$E2E"/jitp/*.lua)
reduced && progs=$(printf "$E2E/jitp/%s.lua\n" inline_then_own side_traces mid_exit split_table)
emulated && progs=$E2E/jitp/split_table.lua
for p in $progs; do
	[ -f "$p" ] || fail "no $p"
	edges "$(basename "$p" .lua)" "$p" 1
done
