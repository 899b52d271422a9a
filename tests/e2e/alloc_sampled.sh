#!/usr/bin/env bash
# ljlog e2e: sampled allocation (alloc=RATE). alloc_sampled.lua makes N,
# 2N and 3N tables at three sites (one allocation each, one size per
# site). An exact run gives each site's block size; the truth for a site
# is then its count (from the program) times that size. With alloc=RATE:
#  - each site's estimated bytes and count are within 5 standard
#    deviations of the truth: a block of s bytes is recorded with
#    probability q = 1 - exp(-s/RATE) and stands for s/q bytes, so n blocks
#    give an estimate of standard deviation s * sqrt(n (1 - q) / q) (count:
#    sqrt(n (1 - q) / q));
#  - site A (kept) is live by the same estimate; B and C (collected) have
#    nothing live: every free of a sampled block is recorded;
#  - the report says these are estimates (text and JSON);
#  - the sampled log is much smaller than the exact one: it records a
#    share q (below 3% here) of the allocations and their frees.
. "$(dirname "$0")/lib.sh"

prog=$E2E/alloc_sampled.lua
N=40000 RATE=4096

exact=$T/exact.ljlog
profile "file=$exact,nodefaults,alloc" "$prog" $N >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "the exact run failed"; }
expect_eq "program output" "$N" "$(cat "$T/out")"
check_complete "$exact"
report_json "$exact" "$T/exact.json"

for jit in on off; do
	log=$T/sampled-$jit.ljlog
	profile "file=$log,nodefaults,alloc=4k" -j"$jit" "$prog" $N >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "[jit $jit] the sampled run failed"; }
	check_complete "$log"
	report_json "$log" "$T/s.json"
	python3 - "$T/exact.json" "$T/s.json" "$prog" $N $RATE "$jit" <<'PY' || fail "[jit $jit] estimates (above)"
import json, math, sys
ex, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
prog, N, R, jit = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
def bad(msg):
    print(f"FAIL: alloc_sampled: [jit {jit}] {msg}", file=sys.stderr); sys.exit(1)
if d.get("alloc_sampled") != {"rate": R, "estimate": True}:
    bad(f"alloc_sampled {d.get('alloc_sampled')}, expected rate {R}")
lines = {}
for i, l in enumerate(open(prog), 1):
    for tag in "ABC":
        if f"-- SITE {tag}" in l:
            lines[tag] = i
count = {"A": N, "B": 2 * N, "C": 3 * N}
def site(rows, line):
    r = [s for s in rows if s["file"].endswith("alloc_sampled.lua") and s["line"] == line]
    return r[0] if r else None
live = {s["line"]: s for s in d["live_sites"] if s["file"].endswith("alloc_sampled.lua")}
for tag, line in lines.items():
    e = site(ex["alloc_sites"], line)
    n = count[tag]
    if not e or e["alloc_count"] != n or e["alloc_bytes"] % n:
        bad(f"exact run, site {tag} (line {line}): {e}, expected {n} blocks of one size")
    size = e["alloc_bytes"] // n
    q = -math.expm1(-size / R)
    sd_b = size * math.sqrt(n * (1 - q) / q)
    sd_c = math.sqrt(n * (1 - q) / q)
    s = site(d["alloc_sites"], line)
    if not s:
        bad(f"site {tag} (line {line}) not in the sampled report")
    # Counts are rounded per sample (1/q to a whole number): allow that.
    tol_c = 5 * sd_c + n * 0.5 / (1 / q)
    if abs(s["alloc_bytes"] - n * size) > 5 * sd_b:
        bad(f"site {tag}: estimated {s['alloc_bytes']} bytes, truth {n * size}, 5 sd = {5 * sd_b:.0f}")
    if abs(s["alloc_count"] - n) > tol_c:
        bad(f"site {tag}: estimated {s['alloc_count']} blocks, truth {n}, tolerance {tol_c:.0f}")
    lv = live.get(line)
    if tag == "A":
        if not lv or abs(lv["live_bytes"] - n * size) > 5 * sd_b:
            bad(f"site A live {lv}, truth {n * size} bytes, 5 sd = {5 * sd_b:.0f}")
        if s["free_count"] or s["free_bytes"]:
            bad(f"site A: frees recorded {s}")
    elif lv:
        bad(f"site {tag} live after collection: {lv}")
    elif s["free_bytes"] != s["alloc_bytes"]:
        bad(f"site {tag}: freed {s['free_bytes']} of {s['alloc_bytes']}")
    print(f"ok: alloc_sampled: [jit {jit}] site {tag}: {n} x {size} B = {n * size}, estimated {s['alloc_bytes']} "
          f"({(s['alloc_bytes'] - n * size) / sd_b:+.2f} sd), {s['alloc_count']} blocks")
PY
	ljlog report "$log" >"$T/s.txt" 2>&1 || fail "[jit $jit] text report failed"
	grep -q "allocations SAMPLED, one per $RATE bytes on average: .* estimates" "$T/s.txt" ||
		{ show "$T/s.txt"; fail "[jit $jit] text report does not say the figures are estimates"; }
	ljlog report --leaks "$log" >"$T/s.txt" 2>&1 || fail "[jit $jit] --leaks failed"
	grep -q "estimates" "$T/s.txt" || { show "$T/s.txt"; fail "[jit $jit] --leaks does not say estimates"; }
	ljlog report --heap-interval 1s "$log" >"$T/s.txt" 2>&1 || fail "[jit $jit] --heap-interval failed"
	grep -q "estimates" "$T/s.txt" || { show "$T/s.txt"; fail "[jit $jit] --heap-interval does not say estimates"; }
	ok "[jit $jit] the text report, --leaks and --heap-interval say 'estimates'"
done

# Size: the sampled log records about q (64/4096 to 120/4096: below 3%)
# of the allocations and frees; with its fixed part (INTRO, names), well
# under a tenth of the exact log.
es=$(stat -c %s "$exact") ss=$(stat -c %s "$T/sampled-on.ljlog")
[ $((ss * 10)) -lt "$es" ] || fail "sampled log $ss bytes, exact $es: not under a tenth"
ee=$(json_get "$T/exact.json" 'd["events"]') se=$(json_get "$T/s.json" 'd["events"]')
[ $((se * 10)) -lt "$ee" ] || fail "sampled log $se events, exact $ee: not under a tenth"
ok "log size: sampled $ss bytes ($se events), exact $es bytes ($ee events)"

# Bad rates: a clear message naming the option.
for bad in alloc=0 alloc=12x alloc=2g; do
	rc=0
	profile "file=$T/bad.ljlog,$bad" -e 'print(1)' >"$T/out" 2>"$T/err" || rc=$?
	grep -q "bad rate in '$bad'" "$T/err" || { show "$T/err"; fail "$bad: no message naming it"; }
done
ok "bad rates: alloc=0, alloc=12x, alloc=2g named in the message"
