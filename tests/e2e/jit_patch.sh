#!/usr/bin/env bash
# ljlog e2e: the line checks that come with line snapshots are patched out
# of compiled traces, and nothing else changes (src/logger/jitpatch.c).
# jit_patch.lua counts, per trace, LuaJIT's own IR_PROF instructions
# (jit.util.traceir: the checks the trace should have) against the check
# pairs and NOP pairs in its machine code (jit.util.tracemc). Checked:
#  1. under `alloc` and under `sample` (both turn line snapshots on): the
#     hot loop's trace has line checks in its IR, none left in its machine
#     code, one NOP pair for each; the program's output is the unprofiled
#     run's; the side trace LuaJIT links to a guard behind the NOPs is
#     entered (its parent's exits stay few, as unprofiled, not one per
#     round: LuaJIT walked the patched code to retarget the jump);
#  2. with LuaJIT's own profiler in line mode (jit.p, started before ljlog
#     or by the program after it) every check stays: it samples through
#     them;
#  3. `nolines`: no line checks at all.
. "$(dirname "$0")/lib.sh"

case $(uname -m) in
x86_64) ;;
*) skip "the checks are patched on x86-64 only" ;;
esac

prog=$E2E/jit_patch.lua
rounds=300000
luajit_plain "$prog" plain "$rounds" >"$T/plain.out" 2>"$T/plain.err" ||
	{ show "$T/plain.err"; fail "the unprofiled run failed"; }
plain_sum=$(sed -n 's/^sum //p' "$T/plain.out")
plain_exits=$(sed -n 's/^exits //p' "$T/plain.out")
[ -n "$plain_sum" ] && [ -n "$plain_exits" ] || { show "$T/plain.out"; fail "unprofiled output"; }

# run NAME OPTIONS [LUAJIT_ARGS...] -- PROG_ARGS...: profile jit_patch.lua,
# LUAJIT_ARGS before -lljlog.
run() {
	local name=$1 o=$2 pre=()
	shift 2
	while [ "$1" != -- ]; do
		pre+=("$1")
		shift
	done
	shift
	LUAJIT_PROFILE="log:file=$T/$name.ljlog,$o" luajit "${pre[@]}" -lljlog "$prog" "$@" "$rounds" \
		>"$T/$name.out" 2>"$T/$name.err" || { show "$T/$name.err"; fail "[$name] the profiled run failed"; }
	check_complete "$T/$name.ljlog"
	expect_eq "[$name] sum" "$plain_sum" "$(sed -n 's/^sum //p' "$T/$name.out")"
}

# totals NAME: "PROF TESTS NOPS" summed over the traces.
totals() {
	awk '$1 == "trace" { p += $3; t += $4; n += $5 } END { print p + 0, t + 0, n + 0 }' "$T/$1.out"
}

for fam in alloc sample=1ms; do
	name=${fam%%=*}
	run "$name" "$fam" -- plain
	read -r prof tests nops <<<"$(totals "$name")"
	[ "$prof" -ge 2 ] || { show "$T/$name.out"; fail "[$name] $prof line checks in the IR: line snapshots are not on"; }
	expect_eq "[$name] checks left in the machine code" 0 "$tests"
	expect_eq "[$name] NOP pairs (one per IR_PROF)" "$prof" "$nops"
	awk '$1 == "trace" && $4 + $5 != $3 { exit 1 }' "$T/$name.out" ||
		{ show "$T/$name.out"; fail "[$name] a trace whose checks and NOPs do not add up to its IR_PROFs"; }
	exits=$(sed -n 's/^exits //p' "$T/$name.out")
	# Unlinked, the parent would exit on each of the rounds after the switch.
	[ "$exits" -le $((plain_exits + 50)) ] ||
		fail "[$name] $exits trace exits (unprofiled $plain_exits): the side trace was not linked"
	ok "[$name] $prof line checks replaced by NOPs, $exits trace exits (unprofiled $plain_exits), same output"
done

# jit.p started by the program (after ljlog), or before ljlog: the checks
# stay.
run jitp_prog alloc -- jitp
run jitp_first alloc -jp=l,/dev/null -- plain
for name in jitp_prog jitp_first; do
	read -r prof tests nops <<<"$(totals "$name")"
	[ "$prof" -ge 2 ] || { show "$T/$name.out"; fail "[$name] $prof line checks in the IR"; }
	expect_eq "[$name] checks left for jit.p" "$prof" "$tests"
	expect_eq "[$name] NOP pairs" 0 "$nops"
	ok "[$name] LuaJIT's profiler in line mode: its $prof checks stay"
done

run nolines alloc,nolines -- plain
expect_eq "[nolines] line checks in the IR" "0 0 0" "$(totals nolines)"
ok "[nolines] no line checks"
