#!/usr/bin/env bash
# ljlog e2e: several logs in one view (issue 27). Three workers of
# merge.lua (worker K calls leaf() 1000 * (K + 1) + 5000 times, shared()
# 500 times) each write a log with calls, alloc and samples (JIT off for
# calls: exact counts). Then:
# - `report --json w-*.ljlog`: every function's and every site's calls,
#   allocations, frees and samples equal the sum of the single reports',
#   exactly; leaf()'s calls equal the program's own count; self time the
#   sum within 0.1%; "logs" lists each log with its pid and duration as
#   its own report says; each VM stays its own (3 VMs, log 0 to 2);
# - `folded` (samples, and --calls --count) prints each stack with the sum
#   of its counts in the single logs;
# - `export --format pprof` of the three agrees with the merged report and
#   stacks (pprof_check.py, by `go tool pprof`, when Go is there);
#   speedscope and chrome hold the 3 VMs; heapsnapshot refuses two logs;
# - a truncated log among them is read up to its end: exit 0, a warning
#   naming it, "truncated" in its "logs" entry;
# - a log of another program (the plain host, preloaded) merges with a
#   warning.
. "$(dirname "$0")/lib.sh"

prog=$E2E/merge.lua
for k in 0 1 2; do
	profile "file=$T/w-$k.ljlog,calls,alloc,sample=1ms" "$prog" "$k" \
		>"$T/w-$k.out" 2>"$T/w-$k.err" ||
		{ show "$T/w-$k.err"; fail "worker $k failed"; }
	check_complete "$T/w-$k.ljlog"
	report_json "$T/w-$k.ljlog" "$T/w-$k.json"
done

# -- The merged report against the single ones ----------------------------------
ljlog report --json "$T"/w-*.ljlog >"$T/m.json" 2>"$T/m.err" ||
	{ show "$T/m.err"; fail "report --json of the three logs failed"; }
python3 - "$T/m.json" "$T"/w-0.json "$T"/w-1.json "$T"/w-2.json \
	"$T"/w-0.ljlog "$T"/w-1.ljlog "$T"/w-2.ljlog <<'EOF' || fail "the merged report is not the sum of the single ones"
import json, sys
m = json.load(open(sys.argv[1]))
singles = [json.load(open(f)) for f in sys.argv[2:5]]
files = sys.argv[5:8]
bad = []

def by_key(rows, key):
    d = {}
    for r in rows:
        k = key(r)
        if k in d:
            bad.append("%s twice" % (k,))
        d[k] = r
    return d

fkey = lambda f: (f["kind"], f["name"], f["file"], f["line"])
skey = lambda s: (s["kind"], s["function"], s["file"], s["line"])
exact_fn = ("calls", "alloc_count", "alloc_bytes", "free_count",
            "free_bytes", "samples", "samples_total")
exact_site = ("alloc_count", "alloc_bytes", "free_count", "free_bytes")
for what, key, fields, rows in (
        ("function", fkey, exact_fn, "functions"),
        ("site", skey, exact_site, "alloc_sites")):
    mm = by_key(m[rows], key)
    ss = [by_key(s[rows], key) for s in singles]
    keys = set(mm) | set().union(*ss)
    for k in keys:
        for f in fields:
            want = sum(s.get(k, {}).get(f, 0) for s in ss)
            got = mm.get(k, {}).get(f, 0)
            if want != got:
                bad.append("%s %s %s: merged %d, sum %d" % (what, k, f, got, want))
    if what == "function":
        for k in keys:
            want = sum(s.get(k, {}).get("self_ns", 0) for s in ss)
            got = mm.get(k, {}).get("self_ns", 0)
            if abs(got - want) > want / 1000 + 1000:
                bad.append("function %s self_ns: merged %d, sum %d" % (k, got, want))
for f in ("samples", "events", "calls", "signals", "intervals"):
    want = sum(s[f] for s in singles)
    if m[f] != want:
        bad.append("%s: merged %d, sum %d" % (f, m[f], want))
for f in ("alloc_count", "alloc_bytes", "free_count", "free_bytes", "live"):
    want = sum(s["heap"][f] for s in singles)
    if m["heap"][f] != want:
        bad.append("heap %s: merged %d, sum %d" % (f, m["heap"][f], want))
# The program's own count: 1000 * (K + 1) + 5000 calls of leaf.
fn = {f["name"].split(" ")[0]: f for f in m["functions"] if f["kind"] == "lua"}
if fn["leaf"]["calls"] != sum(1000 * (k + 1) + 5000 for k in range(3)):
    bad.append("leaf: %d calls, the program made 21000" % fn["leaf"]["calls"])
if fn["shared"]["calls"] != 1500:
    bad.append("shared: %d calls, the program made 1500" % fn["shared"]["calls"])
logs = m["logs"]
if [l["file"] for l in logs] != files:
    bad.append("logs: %s, not %s" % ([l["file"] for l in logs], files))
for l, s in zip(logs, singles):
    if l["pid"] != s["pid"] or l["duration_ns"] != s["duration_ns"] or not l["complete"]:
        bad.append("log %s: pid %d duration %d complete %s; its report: pid %d duration %d"
                   % (l["file"], l["pid"], l["duration_ns"], l["complete"],
                      s["pid"], s["duration_ns"]))
if len(set(l["pid"] for l in logs)) != 3:
    bad.append("the logs' pids are not three: %s" % [l["pid"] for l in logs])
vms = sorted((v["log"], v["id"]) for v in m["vm_list"])
if vms != [(0, 1), (1, 1), (2, 1)]:
    bad.append("VMs (log, id): %s, expected one per log" % vms)
if m["vms"] != 3:
    bad.append("vms: %d, expected 3" % m["vms"])
for s in singles:
    if s["logs"][0]["pid"] != s["pid"] or len(s["logs"]) != 1:
        bad.append("a single report's logs: %s" % s["logs"])
if bad:
    print("\n".join(bad[:40]), file=sys.stderr)
    sys.exit(1)
print("%d functions, %d sites, %d samples, %d calls: the sums of the three"
      % (len(m["functions"]), len(m["alloc_sites"]), m["samples"], m["calls"]))
EOF
ok "report of three logs: every function's and site's counts are the sums of the single reports', leaf's the program's own"
ljlog report "$T"/w-*.ljlog >"$T/m.txt" 2>"$T/m.txt.err" || fail "report (text) of the three logs failed"
grep -q "^ljlog report: 3 logs of " "$T/m.txt" || { show "$T/m.txt"; fail "the text header does not say 3 logs"; }
for k in 0 1 2; do
	grep -q "^  log $k: $T/w-$k.ljlog, pid [0-9]*, ran .*, complete$" "$T/m.txt" ||
		{ show "$T/m.txt"; fail "the text header has no line for w-$k.ljlog"; }
done
ok "report (text): a header line per log"

# --by-log: each function's figures in each log alone, as its own report.
ljlog report --json --by-log "$T"/w-*.ljlog >"$T/bl.json" 2>"$T/bl.err" ||
	{ show "$T/bl.err"; fail "report --json --by-log failed"; }
cat >"$T/bylog.py" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
singles = [json.load(open(f)) for f in sys.argv[2:5]]
key = lambda f: (f["kind"], f["name"], f["file"], f["line"])
S = [{key(f): f for f in s["functions"]} for s in singles]
n = 0
for f in m["functions"]:
    got = {b["log"]: b for b in f["by_log"]}
    for i, s in enumerate(S):
        g = s.get(key(f))
        ran = g and (g["calls"] or g["samples_total"] or g["alloc_count"] or g["total_ns"])
        if bool(ran) != (i in got):
            sys.exit("%s: log %d %s in by_log" % (f["name"], i, "missing" if ran else "listed"))
        if ran:
            for k in ("calls", "self_ns", "total_ns", "samples", "samples_total", "alloc_count", "alloc_bytes"):
                if got[i][k] != g[k]:
                    sys.exit("%s log %d %s: %d, its report %d" % (f["name"], i, k, got[i][k], g[k]))
            n += 1
print(n)
PY
python3 "$T/bylog.py" "$T/bl.json" "$T"/w-0.json "$T"/w-1.json "$T"/w-2.json >/dev/null ||
	fail "--by-log is not each log's own report"
ok "report --json --by-log: each function's figures in each log are that log's own report's"

# -- Stacks --------------------------------------------------------------------------
# sum_folded OUT ARGS...: the folded stacks of each log (ljlog folded ARGS
# LOG), summed per stack, sorted.
sum_folded() {
	local out=$1
	shift
	for k in 0 1 2; do
		ljlog folded "$@" "$T/w-$k.ljlog" || fail "folded $* w-$k.ljlog failed"
	done | awk '{n = $NF; $NF = ""; s[$0] += n} END {for (k in s) print k s[k]}' |
		LC_ALL=C sort >"$out"
}
# (Each view named: a log without samples, which a loaded machine can
# make, would print call stacks in folded's default view.)
for view in "--lua" "--calls --count" "--lines"; do
	# shellcheck disable=SC2086
	sum_folded "$T/sum.folded" $view
	# shellcheck disable=SC2086
	ljlog folded $view "$T"/w-*.ljlog 2>/dev/null | LC_ALL=C sort >"$T/m.folded" ||
		fail "folded $view of the three logs failed"
	[ -s "$T/m.folded" ] || fail "folded $view: nothing"
	cmp -s "$T/sum.folded" "$T/m.folded" ||
		{ diff "$T/sum.folded" "$T/m.folded" | head -20 >&2; fail "folded $view: the merged stacks are not the sums"; }
done
ok "folded (--lua, --calls --count, --lines): each stack's count is the sum of its counts in the three logs"

# -- Exports -------------------------------------------------------------------------
ljlog export --format speedscope -o "$T/m.speedscope.json" "$T"/w-*.ljlog 2>"$T/ss.err" ||
	{ show "$T/ss.err"; fail "speedscope of the three logs failed"; }
python3 - "$T/m.speedscope.json" "$T"/w-*.json <<'EOF' || fail "speedscope of the three logs"
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(p["name"] for p in d["profiles"] if p["type"] == "sampled"
               and p["name"].startswith("VM "))
want = sorted("VM 1 of pid %d samples" % json.load(open(f))["pid"]
              for f in sys.argv[2:])
if names != want:
    sys.exit("sampled profiles %s, expected %s" % (names, want))
EOF
ljlog export --format chrome -o "$T/m.chrome.json" "$T"/w-*.ljlog 2>"$T/ch.err" ||
	{ show "$T/ch.err"; fail "chrome of the three logs failed"; }
python3 - "$T/m.chrome.json" "$T"/w-*.json <<'EOF' || fail "chrome of the three logs"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
# (The calls of the three make more than the export's size limit: those
# past it are left out, so only the processes are compared.)
names = sorted(e["args"]["name"] for e in ev
               if e.get("ph") == "M" and e.get("name") == "process_name")
want = sorted("VM 1 (%s, pid %d)" % (json.load(open(f))["executable"],
                                     json.load(open(f))["pid"])
              for f in sys.argv[2:])
if names != want:
    sys.exit("process names %s, expected %s" % (names, want))
EOF
rc=0
ljlog export --format heapsnapshot -o "$T/m.heapsnapshot" "$T/w-0.ljlog" "$T/w-1.ljlog" 2>"$T/hs.err" || rc=$?
expect_eq "heapsnapshot of two logs: exit status" 2 "$rc"
grep -q "takes one log" "$T/hs.err" || { show "$T/hs.err"; fail "heapsnapshot of two logs: no message"; }
[ ! -e "$T/m.heapsnapshot" ] || fail "heapsnapshot of two logs left a file"
ok "exports: speedscope (a sampled profile per VM), chrome (a process per VM, named by its pid) of three logs; heapsnapshot refuses two"

if command -v go >/dev/null 2>&1; then
	need_go
	pprof_script
	ljlog export --format pprof -q -o "$T/m.pb.gz" "$T"/w-*.ljlog 2>"$T/pp.err" ||
		{ show "$T/pp.err"; fail "pprof of the three logs failed"; }
	ljlog folded "$T"/w-*.ljlog >"$T/m.f" 2>/dev/null
	ljlog folded --calls "$T"/w-*.ljlog >"$T/m.fc" 2>/dev/null
	python3 "$E2E/pprof_check.py" "$T/pprof" "$T/m.pb.gz" "$T/m.json" \
		"$T/m.f" "$T/m.fc" - >"$T/pp.check" 2>&1 ||
		{ cat "$T/pp.check" >&2; fail "pprof of the three logs differs from their merged report"; }
	ok "pprof of the three logs: $(cat "$T/pp.check")"
	# -tagfocus pid=N keeps one worker's samples: its own report's count.
	for k in 0 1 2; do
		pid=$(json_get "$T/w-$k.json" 'd["pid"]')
		want=$(json_get "$T/w-$k.json" 'd["samples"]')
		got=$("$T/pprof" -symbolize=none -raw -tagfocus="pid=$pid" -sample_index=samples "$T/m.pb.gz" 2>/dev/null |
			awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0} s && /^ +[0-9]/ && /:/ {n += $1} END {print n + 0}')
		expect_eq "pprof -tagfocus pid=$pid: samples" "$want" "$got"
	done
	ok "pprof -tagfocus pid=N: each worker's samples, as its own report counts them"
else
	echo "info: $test_name: no Go: the merged pprof export is not read by go tool pprof here"
fi

# -- A truncated log among them ------------------------------------------------------
size=$(stat -c %s "$T/w-1.ljlog")
head -c $((size * 6 / 10)) "$T/w-1.ljlog" >"$T/t-1.ljlog"
rc=0
ljlog report --json "$T/w-0.ljlog" "$T/t-1.ljlog" "$T/w-2.ljlog" >"$T/t.json" 2>"$T/t.err" || rc=$?
expect_eq "report with a truncated log among them: exit status" 0 "$rc"
grep -q "warning: $T/t-1.ljlog: log truncated" "$T/t.err" ||
	{ show "$T/t.err"; fail "no warning naming the truncated log"; }
ljlog report --json "$T/t-1.ljlog" >"$T/t-1.json" 2>/dev/null ||
	fail "report of the truncated log alone failed"
python3 - "$T/t.json" "$T/w-0.json" "$T/w-2.json" "$T/t-1.json" <<'EOF' || fail "a truncated log among three"
import json, sys
t, a, b, c = [json.load(open(f)) for f in sys.argv[1:5]]
st = [(l["complete"], l["truncated"]) for l in t["logs"]]
if st != [(True, False), (False, True), (True, False)]:
    sys.exit("logs (complete, truncated): %s" % st)
if t["logs"][1]["error"] is None:
    sys.exit("the truncated log's entry has no error")
tot = lambda d, f: sum(x[f] for x in d["functions"])
for f in ("calls", "samples", "alloc_count", "alloc_bytes"):
    if tot(t, f) != tot(a, f) + tot(b, f) + tot(c, f):
        sys.exit("%s: %d, the three single reports' sum %d" % (f, tot(t, f), tot(a, f) + tot(b, f) + tot(c, f)))
EOF
ok "a truncated log among three: read up to its end (the sums of the three single reports), named in a warning and in \"logs\""

# -- Another program ------------------------------------------------------------------
ph=$top_builddir/tests/e2e/plainhost
lib=$top_builddir/.libs/libljlog.so
LUAJIT_PROFILE="log:file=$T/p.ljlog,calls" timeout "$E2E_TIMEOUT" \
	env LD_PRELOAD="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$lib" \
	"$ph" "$prog" >"$T/p.out" 2>"$T/p.err" || { show "$T/p.err"; fail "the plain host failed"; }
check_complete "$T/p.ljlog"
ljlog report --json "$T/w-0.ljlog" "$T/p.ljlog" >"$T/p.json" 2>"$T/p2.err" ||
	{ show "$T/p2.err"; fail "report of logs of two programs failed"; }
grep -q "warning: logs of different programs merged: .*luajit.* and .*plainhost" "$T/p2.err" ||
	{ show "$T/p2.err"; fail "no warning that the logs are of different programs"; }
ok "logs of two programs merge with a warning"

# -- A flame graph of several logs ---------------------------------------------------
ljlog flame -o "$T/m.html" "$T"/w-*.ljlog 2>"$T/fl.err" ||
	{ show "$T/fl.err"; fail "flame of the three logs failed"; }
grep -q "\"title\":\"w-0.ljlog and 2 more logs\"" "$T/m.html" ||
	fail "flame of the three logs: the title does not name them"
ok "flame of three logs: one page, titled for them"
