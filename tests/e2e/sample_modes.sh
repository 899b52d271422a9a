#!/usr/bin/env bash
# ljlog e2e: the snapshots ljlog adds to compiled code, against LuaJIT's
# own profiler. sample_modes.lua prints how many IR PROF checks (each with
# its snapshot) the JIT put into the traces of a loop with an inlined
# function, as jit.util lists them. Ground truth: jit.profile started in
# mode f (a snapshot where the function changes, jit.p's default) and in
# mode l (where the line changes), with a 1 s interval (no sample fires).
#  - sample: exactly mode f's count (inlined functions named, as jit.p);
#  - sample,lines / alloc / sample,alloc: exactly mode l's, more than f's;
#  - nolines (with sample, with alloc): none, as unprofiled;
#  - the same traces in every run.
. "$(dirname "$0")/lib.sh"

prog=$E2E/sample_modes.lua
# counts NAME: "traces prof" of one run's output in $T/NAME.out
counts() { awk '$3 == "true" { print $1, $2 }' "$T/$1.out"; }
run_plain() { # NAME [MODE]: unprofiled, or under jit.profile in MODE
	luajit_plain ${2:+-e "require('jit.profile').start('${2}i1000', function() end)"} \
		"$prog" >"$T/$1.out" 2>"$T/$1.err" || { show "$T/$1.err"; fail "[$1] the run failed"; }
	[ -n "$(counts "$1")" ] || { show "$T/$1.out"; fail "[$1] no counts"; }
}
run_lj() { # NAME OPTIONS
	profile "file=$T/$1.ljlog,$2" "$prog" >"$T/$1.out" 2>"$T/$1.err" ||
		{ show "$T/$1.err"; fail "[$1] the profiled run failed"; }
	[ -n "$(counts "$1")" ] || { show "$T/$1.out"; fail "[$1] no counts"; }
	check_complete "$T/$1.ljlog"
}

run_plain plain
run_plain jp_f f
run_plain jp_l l
run_lj sample "sample=1s"
run_lj lines "sample=1s,lines"
run_lj nolines "sample=1s,nolines"
run_lj alloc "nodefaults,alloc"
run_lj alloc_nolines "nodefaults,alloc,nolines"
run_lj both "sample=1s,alloc"

prof() { counts "$1" | cut -d' ' -f2; }
expect_eq "IR PROF unprofiled" 0 "$(prof plain)"
f=$(prof jp_f) l=$(prof jp_l)
[ "$f" -gt 0 ] || fail "jit.profile mode f: no PROF in the traces ($f): the loop shows nothing"
[ "$l" -gt "$f" ] || fail "jit.profile mode l: $l PROF, not more than mode f's $f"
expect_eq "IR PROF with sample (jit.profile mode f's)" "$f" "$(prof sample)"
expect_eq "IR PROF with sample,lines (mode l's)" "$l" "$(prof lines)"
expect_eq "IR PROF with alloc (mode l's)" "$l" "$(prof alloc)"
expect_eq "IR PROF with sample,alloc (mode l's)" "$l" "$(prof both)"
expect_eq "IR PROF with sample,nolines" 0 "$(prof nolines)"
expect_eq "IR PROF with alloc,nolines" 0 "$(prof alloc_nolines)"
for r in plain sample nolines alloc_nolines; do
	expect_eq "traces [$r] (mode f and none: as jit.profile f)" \
		"$(counts jp_f | cut -d' ' -f1)" "$(counts $r | cut -d' ' -f1)"
done
for r in lines alloc both; do
	expect_eq "traces [$r] (as jit.profile l)" \
		"$(counts jp_l | cut -d' ' -f1)" "$(counts $r | cut -d' ' -f1)"
done
ok "snapshots in compiled code: sample $f PROF (jit.p mode f), lines and alloc $l (mode l), nolines 0"
