#!/usr/bin/env bash
# ljlog e2e: report --leaks and --heap-interval on a leak made by
# construction. leaks.lua keeps N tables in a global (one allocation each,
# on the line marked LEAK) and makes M tables that become garbage (line
# GARBAGE), then collects. Checked, JIT on and off:
#  - the LEAK site has exactly N live objects, N times its block size in
#    live bytes; the GARBAGE site M allocations and 0 live;
#  - the live bytes of all sites add up to allocated - freed in the log,
#    and with the heap at attach to the report's heap.live;
#  - ljlog's own objects (its module, made by -lljlog) are the site
#    "(ljlog)", none is a site in one of ljlog's C functions;
#  - --heap-interval's last interval agrees with --leaks, site by site;
#  - the text views name the site and say the figures.
. "$(dirname "$0")/lib.sh"

prog=$E2E/leaks.lua
leak_line=$(grep -n -- '-- LEAK' "$prog" | cut -d: -f1)
garbage_line=$(grep -n -- '-- GARBAGE' "$prog" | cut -d: -f1)
N=3000 M=12000

for jit in on off; do
	log=$T/leaks-$jit.ljlog
	profile "file=$log,nodefaults,alloc" -j"$jit" "$prog" $N $M >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "[jit $jit] the profiled run failed"; }
	expect_eq "[jit $jit] program output" "$N	$M" "$(cat "$T/out")"
	check_complete "$log"
	report_json "$log" "$T/r.json"
	python3 - "$T/r.json" "$prog" "$leak_line" "$garbage_line" $N $M "$jit" <<'PY' || fail "[jit $jit] live sites (above)"
import json, sys
d = json.load(open(sys.argv[1]))
prog, leak, garbage, N, M, jit = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
def bad(msg):
    print(f"FAIL: leaks: [jit {jit}] {msg}", file=sys.stderr); sys.exit(1)
if d["alloc_sampled"] is not None:
    bad(f"alloc_sampled {d['alloc_sampled']}, expected null (exact)")
live = {(s["file"], s["line"]): s for s in d["live_sites"]}
allocs = {(s["file"], s["line"]): s for s in d["alloc_sites"]}
key = lambda line: next((k for k in allocs if k[0].endswith("leaks.lua") and k[1] == line), None)
k = key(leak)
if not k or k not in live:
    bad(f"no live site at leaks.lua:{leak}: {d['live_sites']}")
s, a = live[k], allocs[k]
if s["function"].split(" ")[0] != "keep":
    bad(f"leak site function {s['function']!r}, expected keep")
if a["alloc_count"] != N or s["live_count"] != N:
    bad(f"leak site: {a['alloc_count']} allocs, {s['live_count']} live, expected {N} and {N}")
size = a["alloc_bytes"] // N
if size * N != a["alloc_bytes"] or s["live_bytes"] != size * N or size < 32:
    bad(f"leak site: live_bytes {s['live_bytes']}, alloc_bytes {a['alloc_bytes']}: not {N} blocks of one size")
g = key(garbage)
if not g or allocs[g]["alloc_count"] != M or allocs[g]["free_count"] != M:
    bad(f"garbage site: {allocs.get(g)}, expected {M} allocs and {M} frees")
if g in live:
    bad(f"garbage site is live: {live[g]}")
# The live sites are sorted by live bytes.
b = [x["live_bytes"] for x in d["live_sites"]]
if b != sorted(b, reverse=True):
    bad(f"live_sites not sorted by live_bytes: {b}")
total = sum(x["live_bytes"] for x in d["live_sites"])
h = d["heap"]
if total != h["alloc_bytes"] - h["free_bytes"]:
    bad(f"sum of live_bytes {total} != alloc_bytes - free_bytes {h['alloc_bytes'] - h['free_bytes']}")
if total + h["attach"] != h["live"]:
    bad(f"sum of live_bytes {total} + attach {h['attach']} != heap.live {h['live']}")
cnt = sum(x["live_count"] for x in d["live_sites"])
if cnt != h["alloc_count"] - h["free_count"]:
    bad(f"sum of live_count {cnt} != alloc_count - free_count")
# ljlog's own objects (its module's table and functions, made in
# luaopen_ljlog; what it makes at close) are "(ljlog)", not sites of its C
# functions (issue 38, point 7).
own = [x for x in d["alloc_sites"] if x["function"].startswith(("luaopen_ljlog", "ljlog."))]
if own:
    bad(f"allocation sites in ljlog's own functions: {own}")
mine = [x for x in d["live_sites"] if x["function"] == "(ljlog)"]
if not mine or mine[0]["live_count"] < 1:
    bad(f"no live site (ljlog) (ljlog's module, made by -lljlog): {d['live_sites']}")
print(f"ok: leaks: [jit {jit}] keep line {leak}: {N} live x {size} bytes; garbage line {garbage}: {M} allocated, 0 live; sum of live bytes {total} = allocated - freed")
PY

	# --heap-interval: the last interval is the state --leaks shows.
	ljlog report --json --heap-interval 1ms "$log" >"$T/iv.json" 2>"$T/iv.err" ||
		{ show "$T/iv.err"; fail "[jit $jit] report --json --heap-interval failed"; }
	python3 - "$T/r.json" "$T/iv.json" "$jit" <<'PY' || fail "[jit $jit] heap intervals (above)"
import json, sys
d, iv, jit = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def bad(msg):
    print(f"FAIL: leaks: [jit {jit}] {msg}", file=sys.stderr); sys.exit(1)
ivs = iv["heap_intervals"]
if not ivs or iv["heap_interval_ns"] != 1000000:
    bad(f"no intervals, or interval {iv.get('heap_interval_ns')}")
last = ivs[-1]
if last["live_bytes"] != d["heap"]["live"]:
    bad(f"last interval live_bytes {last['live_bytes']} != heap.live {d['heap']['live']}")
want = {(s["function"], s["line"]): s["live_bytes"] for s in d["live_sites"] if s["live_bytes"]}
got = {(s["function"], s["line"]): s["live_bytes"] for s in last["sites"]}
if want != got:
    bad(f"last interval's sites {got} != live_sites {want}")
t = [x["time_ns"] for x in ivs]
if t != sorted(t):
    bad(f"interval times not in order: {t}")
for x in ivs[:-1]:
    if x["time_ns"] % 1000000:
        bad(f"interval ending at {x['time_ns']} ns: not a multiple of 1 ms")
# The change of a site is its live bytes minus the interval before's.
prev = {}
for x in ivs:
    for s in x["sites"]:
        k = (s["function"], s["line"])
        if s["change"] != s["live_bytes"] - prev.get(k, 0):
            bad(f"at {x['time_ns']}: {k} change {s['change']}, live {s['live_bytes']}, before {prev.get(k, 0)}")
    prev = {(s["function"], s["line"]): s["live_bytes"] for s in x["sites"]}
print(f"ok: leaks: [jit {jit}] {len(ivs)} intervals; the last = --leaks = heap.live {last['live_bytes']}")
PY

	# Text: the site, with N objects.
	ljlog report --leaks "$log" >"$T/leaks.txt" 2>&1 || fail "[jit $jit] report --leaks failed"
	grep -Eq "^ +$N +[0-9.]+ (B|KiB|MiB)  keep \(.*leaks.lua:[0-9]+\) line $leak_line\$" "$T/leaks.txt" ||
		{ show "$T/leaks.txt"; fail "[jit $jit] report --leaks: no row '$N ... keep (...) line $leak_line'"; }
	grep -q "estimate" "$T/leaks.txt" && { show "$T/leaks.txt"; fail "[jit $jit] exact log called an estimate"; }
	ljlog report --heap-interval 1ms -n 2 "$log" >"$T/iv.txt" 2>&1 || fail "[jit $jit] report --heap-interval failed"
	grep -q "^Live heap by interval of 1.000 ms" "$T/iv.txt" || { show "$T/iv.txt"; fail "[jit $jit] --heap-interval text: no title"; }
	# Sizes with units, as --leaks shows them (issue 38, 10: "7910517 bytes live").
	grep -Eq "^at [0-9.]+ ms: [0-9.]+ (B|KiB|MiB) live \(\+?-?[0-9.]+ (B|KiB|MiB)\), [0-9]+ sites\$" "$T/iv.txt" &&
		grep -Eq "^ +[0-9.]+ (B|KiB|MiB) +\+?-?[0-9.]+ (B|KiB|MiB)  keep \(" "$T/iv.txt" &&
		! grep -q "bytes live" "$T/iv.txt" ||
		{ show "$T/iv.txt"; fail "[jit $jit] --heap-interval text: sizes without units"; }
	ok "[jit $jit] text views name keep line $leak_line with $N objects"
done

# Bad intervals: a clear message and exit 2.
rc=0
ljlog report --heap-interval 10 "$log" >/dev/null 2>"$T/bad.err" || rc=$?
expect_eq "--heap-interval 10 (no unit): exit status" 2 "$rc"
grep -q "heap-interval wants a duration" "$T/bad.err" || { show "$T/bad.err"; fail "--heap-interval 10: no message"; }
rc=0
ljlog report --heap-interval 1ns "$log" >/dev/null 2>"$T/bad.err" || rc=$?
expect_eq "--heap-interval 1ns (too many): exit status" 2 "$rc"
grep -q "more than 100000 intervals" "$T/bad.err" || { show "$T/bad.err"; fail "--heap-interval 1ns: no message"; }
ok "bad intervals: exit 2 with a message"
