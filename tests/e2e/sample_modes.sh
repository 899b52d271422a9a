#!/usr/bin/env bash
# ljlog e2e: the snapshots ljlog adds to compiled code, against LuaJIT's
# own profiler. sample_modes.lua prints, for the traces that allocate and
# for the others, how many traces there are and how many IR PROF checks
# (each with its snapshot) the JIT put into them, as jit.util lists them.
# Ground truth: jit.profile started in mode f (a snapshot where the
# function changes, jit.p's default) and in mode l (where the line
# changes), with a 1 s interval (no sample fires).
#  - sample: exactly mode f's counts (inlined functions named, as jit.p);
#  - sample,lines / alloc,lines: exactly mode l's;
#  - alloc: mode l's in the traces that allocate (the loop's first
#    instruction allocates, so the switch to a snapshot per line comes
#    where mode l's first check is), none in the others (as unprofiled);
#  - sample,alloc: mode l's where traces allocate, mode f's elsewhere;
#  - nolines (with sample, with alloc): none, as unprofiled.
. "$(dirname "$0")/lib.sh"

prog=$E2E/sample_modes.lua
# counts NAME: "atraces aprof ntraces nprof" of one run's output in
# $T/NAME.out (a: traces that allocate, n: the others)
counts() { awk '$5 == "true" { print $1, $2, $3, $4 }' "$T/$1.out"; }
run_plain() { # NAME [MODE]: unprofiled, or under jit.profile in MODE
	anchor_run "$T/$1.out" "$T/$1.err" luajit_plain \
		${2:+-e "require('jit.profile').start('${2}i1000', function() end)"} \
		"$prog" || { show "$T/$1.err"; fail "[$1] the run failed"; }
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
run_lj alloc_lines "nodefaults,alloc,lines"
run_lj alloc_nolines "nodefaults,alloc,nolines"
run_lj both "sample=1s,alloc"

# field NAME N: field N of counts NAME
field() { counts "$1" | cut -d' ' -f"$2"; }
for r in plain jp_f jp_l; do
	[ "$(field $r 1)" -ge 1 ] && [ "$(field $r 3)" -ge 1 ] ||
		fail "[$r] no trace that allocates or none that does not: $(counts $r)"
done
expect_eq "IR PROF unprofiled" "0 0" "$(field plain 2) $(field plain 4)"
fa=$(field jp_f 2) fn=$(field jp_f 4) la=$(field jp_l 2) ln=$(field jp_l 4)
[ "$fn" -gt 0 ] || fail "jit.profile mode f: no PROF in the inlining loop ($fn)"
[ "$la" -gt 0 ] || fail "jit.profile mode l: no PROF in the allocating loop ($la)"
[ "$ln" -gt "$fn" ] || fail "jit.profile mode l: $ln PROF in the inlining loop, not more than mode f's $fn"
# expect_counts NAME WHAT REF: NAME's counts equal REF's (both classes)
expect_counts() { expect_eq "traces and IR PROF [$1] ($2)" "$(counts "$3")" "$(counts "$1")"; }
expect_counts sample "jit.profile mode f" jp_f
expect_counts lines "jit.profile mode l" jp_l
expect_counts alloc_lines "jit.profile mode l" jp_l
expect_eq "traces and IR PROF [alloc] (mode l's where it allocates, none elsewhere)" \
	"$(field jp_l 1) $la $(field plain 3) 0" "$(counts alloc)"
expect_eq "traces and IR PROF [sample,alloc] (mode l's where it allocates, f's elsewhere)" \
	"$(field jp_l 1) $la $(field jp_f 3) $fn" "$(counts both)"
for r in nolines alloc_nolines; do
	expect_eq "IR PROF [$r]" "0 0" "$(field $r 2) $(field $r 4)"
done
ok "snapshots in compiled code: sample $fn PROF (jit.p mode f), lines $la+$ln (mode l), alloc $la where it allocates and none elsewhere, nolines 0"
