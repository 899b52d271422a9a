#!/usr/bin/env bash
# ljlog e2e: allocations made by compiled code are charged to the line that
# allocates, not to the line where the trace started. The per-line split of
# allocations with the JIT on must match the exact one with the JIT off
# (within 3 percentage points), on binary-trees (bench/binarytrees.lua:
# its two table constructors allocate half the tables each) and on a
# loop whose trace inlines the functions that allocate
# (alloc_trace_inline.lua) and on a loop whose trace starts with numeric
# lines and then concatenates, makes a table and grows one
# (alloc_trace_kinds.lua: with no snapshot per line there, its strings and
# tables go to the numeric line); the JIT-on runs must really have allocated in
# traces. Without the return address into the trace (the stack search
# turned off), a site is the trace itself: "trace N (started at line L)".
. "$(dirname "$0")/lib.sh"

# split LOG OUT: "function line count" per Lua allocation site, by count.
split() {
	report_json "$1" "$T/split.json"
	python3 - "$T/split.json" >"$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["alloc_sites"]:
    if s["kind"] == "lua" and s["alloc_count"] >= 100:
        print(s["function"].split(" (")[0].replace(" ", "_"), s["line"], s["alloc_count"])
PY
}

# compare ON OFF LABEL: the same sites, shares within 3 points.
compare() {
	python3 - "$1" "$2" <<'PY' || { show "$1" "JIT on"; show "$2" "JIT off"; fail "[$3] the per-line split differs"; }
import sys
def load(p):
    r = {}
    for l in open(p):
        f, line, n = l.split()
        r[(f, int(line))] = int(n)
    return r
on, off = load(sys.argv[1]), load(sys.argv[2])
ton, toff = sum(on.values()), sum(off.values())
bad = 0
for k in sorted(set(on) | set(off)):
    a, b = 100.0 * on.get(k, 0) / ton, 100.0 * off.get(k, 0) / toff
    print(f"  {k[0]} line {k[1]}: JIT on {a:.1f}%, JIT off {b:.1f}%")
    bad |= abs(a - b) > 3
sys.exit(bad)
PY
}

# trace_allocs LOG: ALLOC events of site kind trace whose place is known.
trace_allocs() {
	ljlog dump -v "$1" | grep -c ' ALLOC site trace .* at +[0-9]* ->' || true
}

for prog in "$top_srcdir/bench/binarytrees.lua 10" "$E2E/alloc_trace_inline.lua" \
	"$E2E/alloc_trace_kinds.lua"; do
	set -- $prog
	name=${1##*/}
	for jit in on off; do
		log=$T/$jit.ljlog
		rm -f "$log"
		flag=
		[ "$jit" = off ] && flag=-joff
		profile "file=$log,nodefaults,alloc" $flag "$1" ${2:-} \
			>"$T/out" 2>"$T/err" ||
			{ show "$T/err"; fail "[$name, JIT $jit] the profiled run failed"; }
		check_complete "$log"
		split "$log" "$T/$jit.split"
	done
	n=$(trace_allocs "$T/on.ljlog")
	[ "$n" -gt 1000 ] ||
		fail "[$name] JIT on: $n allocations in traces with a known place, expected many"
	compare "$T/on.split" "$T/off.split" "$name"
	ok "[$name] the JIT-on split matches the JIT-off one within 3 points ($n allocations in traces)"
	[ "$(wc -l <"$T/off.split")" -ge 2 ] || fail "[$name] fewer than 2 sites: $(cat "$T/off.split")"
done

# No return address found: the trace, never a line. On arm64 the VM does
# not store the running trace's number (vm_arm64.dasc, BC_JLOOP): the
# return address is also how the trace is found, so the site is "(trace)".
log=$T/noscan.ljlog
LJLOG_TEST_TRACE_SCAN=0 profile "file=$log,nodefaults,alloc" \
	"$top_srcdir/bench/binarytrees.lua" 10 >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "[no scan] the profiled run failed"; }
check_complete "$log"
report_json "$log" "$T/noscan.json"
arch=$(luajit -e 'print(jit.arch)')
if [ "$arch" = arm64 ]; then
	want='(trace)' wantre='\(trace\)'
else
	want='trace N (started at line L)' wantre='trace \d+ \(started at line \d+\)'
fi
python3 - "$T/noscan.json" "$wantre" <<'PY' || fail "[no scan] trace sites are not reported as '$want'"
import json, re, sys
d = json.load(open(sys.argv[1]))
sites = d["alloc_sites"]
total = sum(s["alloc_count"] for s in sites)
tr = [s for s in sites if re.fullmatch(sys.argv[2], s["function"])]
for s in tr:
    print(f"  {s['function']} ({s['file']}): {s['alloc_count']} allocs, line {s['line']}")
    assert s["line"] == 0 and s["kind"] == "internal", s
    assert sys.argv[2].startswith("\\(") or s["file"].endswith("binarytrees.lua"), s
n = sum(s["alloc_count"] for s in tr)
# most tables are made by compiled code
assert n > total / 2, (n, total)
PY
ljlog report -n 0 "$log" >"$T/noscan.txt"
grep -Eq "^ *[0-9].*  ${wantre//\\d/[0-9]}\$" "$T/noscan.txt" ||
	{ show "$T/noscan.txt"; fail "[no scan] no '$want' site in the text report"; }
ok "[no scan] allocations in traces without a place are '$want' sites"
