#!/usr/bin/env bash
# ljlog e2e: a run against its base (issue 27). compare.lua in version 1
# (the base, twice) and version 2 (step() made slower, a function gone and
# one new), each with calls, alloc and samples (JIT off: exact calls):
# - `report --json --base BASE RUN`: every function's and site's "delta"
#   equals the run's single report less the base's, exactly (calls, self
#   and total time, samples, allocations); the program's own changes
#   (mix +400 calls, new_only new, old_only only in the base) are there;
#   two --base logs merge (mix: 1200 less 400 + 400);
# - the text puts the largest change first (mix: +800 calls);
# - `folded --base` prints each stack once with the base's count, then
#   the run's, as the single logs' folded stacks say;
# - with samples, the changes of the shares within sampling error are
#   marked "~" and last (recomputed here from the counts);
# - a missing base log, --base with --zone: exit 2.
. "$(dirname "$0")/lib.sh"

prog=$E2E/compare.lua
run_version() { # NAME VERSION
	profile "file=$T/$1.ljlog,calls,alloc,sample=1ms" "$prog" "$2" \
		>"$T/$1.out" 2>"$T/$1.err" || { show "$T/$1.err"; fail "$1 (version $2) failed"; }
	check_complete "$T/$1.ljlog"
	report_json "$T/$1.ljlog" "$T/$1.json"
}
run_version b1 1
run_version b2 1
run_version run 2

ljlog report --json --base "$T/b1.ljlog" "$T/run.ljlog" >"$T/d.json" 2>"$T/d.err" ||
	{ show "$T/d.err"; fail "report --json --base failed"; }
ljlog report --json --base "$T/b1.ljlog" --base "$T/b2.ljlog" "$T/run.ljlog" \
	>"$T/d2.json" 2>"$T/d2.err" || { show "$T/d2.err"; fail "report --json with two --base failed"; }
cat >"$T/deltas.py" <<'PY'
import json, sys
d, run, base, d2 = [json.load(open(f)) for f in sys.argv[1:5]]
base_file = sys.argv[5]
bad = []
key = lambda f: (f["kind"], f["name"], f["file"], f["line"])
ran = lambda f: bool(f and (f["calls"] or f["total_ns"] or f["samples"] or
                            f["samples_total"] or f["alloc_count"] or f["free_count"]))
R = {key(f): f for f in run["functions"]}
B = {key(f): f for f in base["functions"]}
fields = ("calls", "self_ns", "total_ns", "samples", "alloc_count", "alloc_bytes")
for f in d["functions"]:
    k = key(f)
    dl = f["delta"]
    if dl["in_base"] != ran(B.get(k)):
        bad.append("%s: in_base %s" % (k[1], dl["in_base"]))
    for fk in fields:
        # The delta's samples are the report's self column: a Lua
        # function's with the builtins it calls (samples_lua).
        rk = "samples_lua" if fk == "samples" else fk
        want = R[k][rk] - B.get(k, {}).get(rk, 0)
        if dl[fk] != want:
            bad.append("%s delta %s: %d, the reports' difference %d" % (k[1], fk, dl[fk], want))
only = sorted((f["name"], f["calls"]) for f in d["base_only_functions"])
want_only = sorted((f["name"], f["calls"]) for k, f in B.items()
                   if ran(f) and not ran(R.get(k)))
if only != want_only:
    bad.append("base_only_functions %s, expected %s" % (only, want_only))
skey = lambda s: (s["function"], s["line"])
RS = {skey(s): s for s in run["alloc_sites"]}
BS = {skey(s): s for s in base["alloc_sites"]}
for s in d["alloc_sites"]:
    for fk in ("alloc_count", "alloc_bytes"):
        want = RS[skey(s)][fk] - BS.get(skey(s), {}).get(fk, 0)
        if s["delta"][fk] != want:
            bad.append("site %s delta %s: %d, expected %d" % (skey(s), fk, s["delta"][fk], want))
# The program's own changes.
by = {f["name"].split(" ")[0]: f for f in d["functions"] if f["kind"] == "lua"}
if by["mix"]["delta"]["calls"] != 800 or by["step"]["delta"]["calls"] != 0:
    bad.append("mix/step call deltas %d/%d, the program's 800/0"
               % (by["mix"]["delta"]["calls"], by["step"]["delta"]["calls"]))
if by["new_only"]["delta"]["in_base"] or by["new_only"]["delta"]["calls"] != 1:
    bad.append("new_only: %s" % by["new_only"]["delta"])
if not any(n.startswith("old_only ") and c == 1 for n, c in only):
    bad.append("old_only is not among base_only_functions: %s" % only)
if [l["file"] for l in d["base"]["logs"]] != [base_file]:
    bad.append("base logs: %s" % d["base"]["logs"])
# Two bases merge: mix 1200 - (400 + 400), quick 400 - (400 + 400).
by2 = {f["name"].split(" ")[0]: f for f in d2["functions"] if f["kind"] == "lua"}
if by2["mix"]["delta"]["calls"] != 400 or by2["quick"]["delta"]["calls"] != -400:
    bad.append("two bases: mix/quick call deltas %d/%d, expected 400/-400"
               % (by2["mix"]["delta"]["calls"], by2["quick"]["delta"]["calls"]))
if bad:
    print("\n".join(bad[:40]), file=sys.stderr)
    sys.exit(1)
print("%d functions, %d sites" % (len(d["functions"]), len(d["alloc_sites"])))
PY
python3 "$T/deltas.py" "$T/d.json" "$T/run.json" "$T/b1.json" "$T/d2.json" "$T/b1.ljlog" ||
	fail "the deltas are not the differences of the single reports"
ok "report --base: every delta is the difference of the single reports; the program's changes are there; two bases merge"

ljlog report --base "$T/b1.ljlog" "$T/run.ljlog" >"$T/d.txt" 2>"$T/d.txt.err" ||
	{ show "$T/d.txt.err"; fail "report --base (text) failed"; }
grep -q "^ljlog report: $T/run.ljlog against the base $T/b1.ljlog$" "$T/d.txt" ||
	{ show "$T/d.txt"; fail "report --base: no header naming the run and the base"; }
# Ordered by the size of the change in self time (the times are the
# machine's: a loaded one stretches any function's, so which comes first
# is not judged); mix's row has its +800 calls.
python3 - "$T/d.txt" <<'PY' || { show "$T/d.txt"; fail "report --base: the self time table (see above)"; }
import re, sys
txt = open(sys.argv[1]).read()
sec = txt.split("\nFunctions:", 1)[1].split("\n\n", 1)[0].splitlines()
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
ch, mix = [], None
for l in sec[2:]:
    m = re.match(r"\s*[\d.]+ (?:ns|us|ms|s)\s+[\d.]+ (?:ns|us|ms|s)\s+([-+]?[\d.]+) (ns|us|ms|s)\s+\S+\s+(\S+)", l)
    if not m:
        continue
    ch.append(abs(float(m.group(1)) * unit[m.group(2)]))
    if " mix (" in l:
        mix = m.group(3)
if len(ch) < 3 or ch != sorted(ch, reverse=True):
    sys.exit("FAIL: changes of self time not largest first: %r" % ch)
if mix != "+800":
    sys.exit("FAIL: mix's change of calls %r, want +800" % mix)
PY
grep -q "old_only (.*) (only in the base)$" "$T/d.txt" ||
	{ show "$T/d.txt"; fail "report --base: old_only is not shown as only in the base"; }
ok "report --base (text): the largest change first, mix +800 calls, old_only only in the base"

# Sampling error. The default families, the JIT off (the interpreter's
# shares differ between runs by sampling alone), wall-clock samples (a
# CPU-time timer fires at most once a kernel tick): the base (version 1),
# the same work again, and version 2. Every "~" in the text and every
# samples_within_noise in JSON is the binomial test of the two shares
# (within 3 standard errors), recomputed here from the counts; version 2's
# mix gains about 19 points of the samples, far beyond: its row is first,
# unmarked.
for v in s1:1 s2:1 s3:2; do
	profile "file=$T/${v%:*}.ljlog,sample=250us,wall" -joff "$prog" "${v#*:}" >/dev/null 2>"$T/err" ||
		{ show "$T/err"; fail "${v%:*} (version ${v#*:}) failed"; }
	report_json "$T/${v%:*}.ljlog" "$T/${v%:*}.json"
done
for run in s2 s3; do
	ljlog report --json --base "$T/s1.ljlog" "$T/$run.ljlog" >"$T/n.json" || fail "report --json --base s1 $run"
	ljlog report -n 0 --base "$T/s1.ljlog" "$T/$run.ljlog" >"$T/n.txt" || fail "report --base s1 $run"
	python3 - "$T/n.json" "$T/s1.json" "$T/n.txt" "$run" <<'PY' || fail "report --base s1 $run: sampling error (see above)"
import json, math, re, sys
d, b, txt, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read(), sys.argv[4]
na, nb = d["samples"], b["samples"]
bad, z_of = [], {}
for f in d["functions"]:
    x = f["delta"]
    ca = f["samples_lua"]  # the samples the report ranks by (builtins for their caller)
    cb = ca - x["samples"]
    pa, pb = ca / na, cb / nb
    se = math.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
    z = abs(pa - pb) / se if se else (0 if pa == pb else math.inf)
    z_of[f["name"]] = z
    if abs(x["samples_share_points"] - 100 * (pa - pb)) > 0.01:
        bad.append("%s: share change %r, counts say %.3f" % (f["name"], x["samples_share_points"], 100 * (pa - pb)))
    if abs(z - 3) > 1e-6 and x["samples_within_noise"] != (z <= 3):
        bad.append("%s: within_noise %r at %.2f standard errors" % (f["name"], x["samples_within_noise"], z))
sec = txt.split("\nFunctions:", 1)[1].split("\n\n", 1)[0].splitlines()
if "share of the samples" not in sec[0] or not sec[1].startswith("  (~: within sampling error"):
    bad.append("text heading %r" % sec[:2])
rows = [l for l in sec[3:] if re.match(r"\s*\d", l) and "without change" not in l]
for l in rows:
    m = re.match(r"\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+%\s+\S+%\s+\S+\s+\S+(?: \S+)? ([~ ])(.*?)(?: \(only in the base\))?$", l)
    if m and m.group(2) not in z_of:  # only in the base: from the row's counts
        ca, cb = (int(x) for x in l.split()[:2])
        pa, pb = ca / na, cb / nb
        z_of[m.group(2)] = abs(pa - pb) / math.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
    if not m:
        bad.append("text row %r not understood" % l)
        continue
    if abs(z_of[m.group(2)] - 3) > 1e-6 and (m.group(1) == "~") != (z_of[m.group(2)] <= 3):
        bad.append("text row %r: marker at %.2f standard errors" % (l, z_of[m.group(2)]))
marks = [l.split("~")[0] == l for l in rows]
if marks != sorted(marks, reverse=True):
    bad.append("rows beyond sampling error are not first")
if run == "s3":
    mix = [f for f in d["functions"] if f["name"].startswith("mix (")][0]
    if mix["delta"]["samples_within_noise"] or mix["delta"]["samples_share_points"] < 10:
        bad.append("version 2's mix: %r" % mix["delta"])
    if not [l for l in rows[:2] if " mix (" in l]:
        bad.append("first rows %r, want mix's change among them, unmarked" % rows[:2])
for x in bad:
    print("FAIL:", x)
print("%s: %d rows, %d within sampling error" % (run, len(rows), sum(1 for l in rows if "~" in l)))
sys.exit(1 if bad else 0)
PY
done
ok "report --base: sampling error by the binomial test of the shares (~), recomputed from the counts; version 2's mix first and beyond it"

# folded --base: "stack BASE RUN" for the union of the stacks.
cat >"$T/folded.py" <<'PY'
import sys
def read(f, n):
    d = {}
    for ln in open(f).read().splitlines():
        parts = ln.rsplit(" ", n)
        d[parts[0]] = [int(x) for x in parts[1:]]
    return d
dd, b, r = read(sys.argv[1], 2), read(sys.argv[2], 1), read(sys.argv[3], 1)
keys = set(b) | set(r)
if set(dd) != keys:
    sys.exit("stacks: %d, the two logs have %d" % (len(dd), len(keys)))
for k in keys:
    want = [b.get(k, [0])[0], r.get(k, [0])[0]]
    if dd[k] != want:
        sys.exit("%s: %s, the logs say %s" % (k, dd[k], want))
lines = open(sys.argv[1]).read().splitlines()
if lines != sorted(lines, key=lambda l: l.rsplit(" ", 2)[0].encode()):
    sys.exit("not sorted by stack")
PY
for view in "--lua" "--calls --count"; do
	# shellcheck disable=SC2086
	ljlog folded $view --base "$T/b1.ljlog" "$T/run.ljlog" >"$T/fd.txt" 2>"$T/fd.err" ||
		{ show "$T/fd.err"; fail "folded $view --base failed"; }
	# shellcheck disable=SC2086
	ljlog folded $view "$T/b1.ljlog" >"$T/fb.txt" 2>/dev/null
	# shellcheck disable=SC2086
	ljlog folded $view "$T/run.ljlog" >"$T/fr.txt" 2>/dev/null
	python3 "$T/folded.py" "$T/fd.txt" "$T/fb.txt" "$T/fr.txt" ||
		fail "folded $view --base: not the two logs' stacks"
done
ok "folded --base (--lua, --calls --count): each stack once, the base's count then the run's"

rc=0
ljlog report --base "$T/nosuch.ljlog" "$T/run.ljlog" >/dev/null 2>"$T/e1.err" || rc=$?
expect_eq "report --base of a missing log: exit status" 2 "$rc"
grep -q "nosuch.ljlog" "$T/e1.err" || { show "$T/e1.err"; fail "report --base of a missing log: no message naming it"; }
rc=0
ljlog folded --zone z --base "$T/b1.ljlog" "$T/run.ljlog" >/dev/null 2>"$T/e2.err" || rc=$?
expect_eq "folded --zone --base: exit status" 2 "$rc"
ok "a missing base log and --base with --zone: exit 2 with a message"

# export --format pprof --base: go tool pprof -top on it prints what
# -top -diff_base prints on the two exports, for every sample type; and
# its calls are report --base's call deltas.
if command -v go >/dev/null 2>&1; then
	need_go
	for n in b1 run; do
		ljlog export -q --format pprof -o "$T/$n.pb.gz" "$T/$n.ljlog" ||
			fail "export --format pprof $n failed"
	done
	ljlog export -q --format pprof --base "$T/b1.ljlog" -o "$T/d.pb.gz" "$T/run.ljlog" 2>"$T/pd.err" ||
		{ show "$T/pd.err"; fail "export --format pprof --base failed"; }
	for si in samples cpu alloc_objects alloc_space calls time; do
		gotool tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -sample_index=$si \
			"$T/d.pb.gz" 2>&1 | sed -n '/^Showing nodes/,$p' >"$T/top.ours" ||
			fail "go tool pprof -top on the diff export failed"
		gotool tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -sample_index=$si \
			-diff_base "$T/b1.pb.gz" "$T/run.pb.gz" 2>&1 | sed -n '/^Showing nodes/,$p' >"$T/top.anchor"
		[ -s "$T/top.ours" ] || fail "pprof --base, $si: go tool pprof printed no table"
		cmp -s "$T/top.ours" "$T/top.anchor" ||
			{ diff "$T/top.anchor" "$T/top.ours" | head -20 >&2; fail "pprof --base, $si: -top differs from -top -diff_base"; }
	done
	gotool tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -sample_index=calls \
		"$T/d.pb.gz" 2>/dev/null >"$T/top.calls"
	python3 - "$T/d.json" "$T/top.calls" <<'PY' || fail "pprof --base: calls differ from report --base"
import json, re, sys
d = json.load(open(sys.argv[1]))
want = {f["name"]: f["delta"]["calls"] for f in d["functions"] if f["delta"]["calls"]}
want.update({f["name"]: -f["calls"] for f in d["base_only_functions"] if f["calls"]})
got = {}
for ln in open(sys.argv[2]).read().splitlines():
    m = re.match(r"^\s*(-?\d+)\s+\S+\s+\S+\s+-?\d+\s+\S+\s+(.*)$", ln)
    if m and int(m.group(1)):
        got[m.group(2)] = int(m.group(1))
if got != want:
    sys.exit("pprof flat calls %s\nreport --base deltas %s" % (sorted(got.items()), sorted(want.items())))
PY
	ok "export --format pprof --base: go tool pprof -top as -top -diff_base on the two exports (samples, cpu, allocations, calls, time); calls as report --base"
else
	echo "info: $test_name: no Go: export --format pprof --base is not read by go tool pprof here"
fi
