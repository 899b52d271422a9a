#!/usr/bin/env bash
# ljlog e2e: narrowing (issue 27), with pprof's meanings. narrow.lua runs
# phase_a() 40 times, a 20 ms gap around the mark "B", then phase_b() 60
# times (calls, alloc and samples; JIT off: exact calls):
# - --from-mark B: phase_a and a_leaf have no calls and no samples;
#   phase_b and b_leaf keep every call, sample and allocation of the whole
#   log; "narrowed" says from when, and how many samples were left out;
# - --to T (T the mark's time, from the run above): the other way round;
#   --from 0 --to T and --from T add up to the whole log's samples of the
#   phases;
# - --focus RE / --ignore RE: `folded` (samples, and call paths by count)
#   prints exactly the whole log's stacks with / without a frame that
#   matches; `report --focus` counts calls only on the paths through it;
# - the same narrowing on report, export --format pprof (go tool pprof,
#   when Go is there) and flame; bad expressions, --to before --from and a
#   missing mark are errors.
. "$(dirname "$0")/lib.sh"

case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) skip "the samples' places cannot be relied on under ThreadSanitizer (signals wait for its sync points), and the windows and filters are judged on them" ;;
esac

profile "file=$T/n.ljlog,calls,alloc,sample=1ms" "$E2E/narrow.lua" >"$T/n.out" 2>"$T/n.err" ||
	{ show "$T/n.err"; fail "the profiled run failed"; }
check_complete "$T/n.ljlog"
report_json "$T/n.ljlog" "$T/all.json"

# rep NAME ARGS...: report --json ARGS of the log into $T/NAME.json.
rep() {
	local name=$1
	shift
	ljlog report --json "$@" "$T/n.ljlog" >"$T/$name.json" 2>"$T/$name.err" ||
		{ show "$T/$name.err"; fail "report --json $* failed"; }
}
rep mark --from-mark B
mark_ns=$(json_get "$T/mark.json" 'd["narrowed"]["from_ns"]')
rep before --to "${mark_ns}ns"
rep after --from "${mark_ns}ns"

cat >"$T/window.py" <<'PY'
import json, sys
a, m, bf, af = [json.load(open(f)) for f in sys.argv[1:5]]
bad = []
def fn(d, name):
    for f in d["functions"]:
        if f["kind"] == "lua" and f["name"].startswith(name + " "):
            return f
    return {"calls": 0, "samples": 0, "samples_total": 0, "alloc_count": 0,
            "alloc_bytes": 0}
def want(d, name, field, value, what):
    got = fn(d, name)[field]
    if got != value:
        bad.append("%s: %s %s %d, expected %d" % (what, name, field, got, value))
if fn(a, "phase_a")["calls"] != 40 or fn(a, "phase_b")["calls"] != 60:
    bad.append("the whole log: phase_a/phase_b calls %d/%d, the program's 40/60"
               % (fn(a, "phase_a")["calls"], fn(a, "phase_b")["calls"]))
for d, what, keep, gone in ((m, "--from-mark B", "b", "a"), (af, "--from T", "b", "a"),
                            (bf, "--to T", "a", "b")):
    for f in ("phase_" + gone, gone + "_leaf"):
        for k in ("calls", "samples", "samples_total", "alloc_count"):
            want(d, f, k, 0, what)
    for f in ("phase_" + keep, keep + "_leaf"):
        for k in ("calls", "samples", "samples_total", "alloc_count", "alloc_bytes"):
            want(d, f, k, fn(a, f)[k], what)
    if d["narrowed"] is None or d["narrowed"]["samples_left_out"] + d["samples"] != a["samples"]:
        bad.append("%s: narrowed %s, %d samples of %d" % (what, d["narrowed"], d["samples"], a["samples"]))
if m["narrowed"]["to_ns"] is not None or bf["narrowed"]["to_ns"] is None:
    bad.append("narrowed to_ns: %s / %s" % (m["narrowed"]["to_ns"], bf["narrowed"]["to_ns"]))
if bf["samples"] + af["samples"] != a["samples"]:
    bad.append("--to T and --from T: %d + %d samples, the log has %d"
               % (bf["samples"], af["samples"], a["samples"]))
if fn(a, "phase_a")["samples_total"] < 5 or fn(a, "phase_b")["samples_total"] < 5:
    bad.append("too few samples to tell: phase_a %d, phase_b %d"
               % (fn(a, "phase_a")["samples_total"], fn(a, "phase_b")["samples_total"]))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("%d samples: %d before the mark, %d after" % (a["samples"], bf["samples"], af["samples"]))
PY
python3 "$T/window.py" "$T/all.json" "$T/mark.json" "$T/before.json" "$T/after.json" >"$T/window.out" ||
	fail "a time window does not keep exactly the phase's calls, samples and allocations"
ok "time windows (--from-mark B, --to T, --from T): each phase's calls, samples and allocations exactly, the other's none ($(cat "$T/window.out"))"

# -- Focus and ignore against the whole log's stacks ------------------------------
cat >"$T/filter.py" <<'PY'
import re, sys
mode, rx, whole, got = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3], sys.argv[4]
def read(f):
    d = {}
    for ln in open(f).read().splitlines():
        st, n = ln.rsplit(" ", 1)
        d[st] = int(n)
    return d
w, g = read(whole), read(got)
keep = {st: n for st, n in w.items()
        if any(rx.search(fr) for fr in st.split(";")) == (mode == "focus")}
if g != keep:
    sys.exit("%s: %d stacks, the whole log's filtered %d; first differences: %s"
             % (mode, len(g), len(keep), sorted(set(g.items()) ^ set(keep.items()))[:4]))
if not keep:
    sys.exit("%s: no stack left to compare" % mode)
PY
for view in "" "--calls --count"; do
	for mode in focus ignore; do
		# shellcheck disable=SC2086
		ljlog folded $view "$T/n.ljlog" >"$T/whole.f" 2>/dev/null || fail "folded $view failed"
		# shellcheck disable=SC2086
		ljlog folded $view --$mode 'phase_b' "$T/n.ljlog" >"$T/got.f" 2>"$T/got.err" ||
			{ show "$T/got.err"; fail "folded $view --$mode failed"; }
		python3 "$T/filter.py" "$mode" 'phase_b' "$T/whole.f" "$T/got.f" ||
			fail "folded $view --$mode phase_b: not the whole log's stacks filtered"
	done
done
ok "folded --focus / --ignore (samples, call paths by count): the whole log's stacks with / without a matching frame"

rep focus --focus 'a_leaf'
python3 - "$T/focus.json" "$T/all.json" <<'PY' || fail "report --focus"
import json, sys
f, a = [json.load(open(x)) for x in sys.argv[1:3]]
by = {x["name"].split(" ")[0]: x for x in f["functions"] if x["kind"] == "lua"}
al = {x["name"].split(" ")[0]: x for x in a["functions"] if x["kind"] == "lua"}
# Only the paths through a_leaf: its calls, none of phase_a's own node
# (phase_a's path ends above a_leaf), none of phase_b's.
if by["a_leaf"]["calls"] != al["a_leaf"]["calls"] or by["phase_a"]["calls"] != 0 \
        or by["phase_b"]["calls"] != 0 or by["b_leaf"]["calls"] != 0:
    sys.exit("calls a_leaf %d phase_a %d phase_b %d b_leaf %d"
             % (by["a_leaf"]["calls"], by["phase_a"]["calls"], by["phase_b"]["calls"],
                by["b_leaf"]["calls"]))
# phase_a's total is a_leaf's (the time on those paths), its self none.
if by["phase_a"]["self_ns"] != 0 or by["phase_a"]["total_ns"] != by["a_leaf"]["total_ns"]:
    sys.exit("phase_a self %d total %d, a_leaf total %d"
             % (by["phase_a"]["self_ns"], by["phase_a"]["total_ns"], by["a_leaf"]["total_ns"]))
if by["a_leaf"]["samples_total"] != al["a_leaf"]["samples_total"] or f["samples"] != al["a_leaf"]["samples_total"]:
    sys.exit("samples: %d, a_leaf's in the whole log %d" % (f["samples"], al["a_leaf"]["samples_total"]))
if f["narrowed"]["focus"] != "a_leaf":
    sys.exit("narrowed: %s" % f["narrowed"])
PY
ok "report --focus a_leaf: calls, time and samples of the paths through it only"

# -- Callers and callees ----------------------------------------------------------
# Under qemu-user (the arm64 pass) a calls log has twice in about 20 runs
# lost the EXITs of gap() and spin() after the mark, so that phase_b
# sat below them in the call tree (an open bug of the calls recording
# there, not of --callers): the tree is not judged under emulation.
if emulated; then
	echo "info: $test_name: --callers/--callees not judged under qemu-user (a lost EXIT, see the comment)"
else
	ljlog report --callees phase_a "$T/n.ljlog" >"$T/ce.txt" 2>"$T/ce.err" || { show "$T/ce.err"; fail "report --callees failed"; }
	ljlog report --callers 'a_leaf|b_leaf' "$T/n.ljlog" >"$T/cr.txt" 2>"$T/cr.err" || { show "$T/cr.err"; fail "report --callers failed"; }
	python3 - "$T/ce.txt" "$T/cr.txt" "$T/all.json" <<'PY' || fail "report --callers / --callees"
import json, re, sys
def rows(f):
    out = []
    for ln in open(f).read().splitlines()[2:]:
        m = re.match(r"^\s*(\d+)\s+(\S+ \S+)\s+(\d+)  ( *)(.*)$", ln)
        if m:
            out.append((len(m.group(4)) // 2, m.group(5).split(" ")[0], int(m.group(1)), int(m.group(3))))
    return out
a = json.load(open(sys.argv[3]))
fn = {f["name"].split(" ")[0]: f for f in a["functions"] if f["kind"] == "lua"}
# (Host frames below a Lua function, a sample in ljlog's own hook, are
# left out of the comparison: only the Lua functions' rows.)
keep = lambda r: [x for x in r if x[1] in fn or x[1] == "a_leaf|b_leaf"]
ce, cr = keep(rows(sys.argv[1])), keep(rows(sys.argv[2]))
want_ce = [(0, "phase_a", 40, fn["phase_a"]["samples_total"]),
           (1, "a_leaf", 2000, fn["a_leaf"]["samples_total"])]
if ce != want_ce:
    sys.exit("--callees phase_a: %s, expected %s" % (ce, want_ce))
main = [k for k in fn if fn[k]["name"].startswith("main chunk (") and
        fn[k]["name"].endswith("narrow.lua)")]
tot = fn["a_leaf"]["samples_total"] + fn["b_leaf"]["samples_total"]
want_cr = sorted([(0, "a_leaf|b_leaf", 5000, tot),
                  (1, "phase_b", 3000, fn["b_leaf"]["samples_total"]),
                  (2, main[0], 3000, fn["b_leaf"]["samples_total"]),
                  (1, "phase_a", 2000, fn["a_leaf"]["samples_total"]),
                  (2, main[0], 2000, fn["a_leaf"]["samples_total"])])
if sorted(cr) != want_cr:
    sys.exit("--callers a_leaf|b_leaf: %s, expected %s" % (cr, want_cr))
PY
	rc=0
	ljlog report --callees nosuch "$T/n.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
	expect_eq "report --callees nosuch: exit status" 1 "$rc"
	ok "report --callees phase_a, --callers 'a_leaf|b_leaf': the program's calls on each path, the samples as the report counts them"
fi

# -- The same on the other commands ----------------------------------------------------
ljlog flame --from-mark B -o "$T/n.html" "$T/n.ljlog" 2>"$T/fl.err" || { show "$T/fl.err"; fail "flame --from-mark failed"; }
grep -q 'phase_b' "$T/n.html" && ! grep -q 'a_leaf' "$T/n.html" ||
	fail "flame --from-mark B: phase_b not in it, or a_leaf in it"
ljlog export --format speedscope --from-mark B -o "$T/n.ss.json" "$T/n.ljlog" 2>"$T/ss.err" ||
	{ show "$T/ss.err"; fail "export speedscope --from-mark failed"; }
python3 - "$T/n.ss.json" <<'PY' || fail "speedscope --from-mark B: a_leaf in its samples"
import json, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
for p in d["profiles"]:
    if p["type"] == "sampled" and p["name"].endswith("samples"):
        for s in p["samples"]:
            if any(names[i].startswith("a_leaf ") for i in s):
                sys.exit("a sample of %s has a_leaf" % p["name"])
PY
if command -v go >/dev/null 2>&1; then
	need_go
	ljlog export -q --format pprof --focus 'phase_b' -o "$T/f.pb.gz" "$T/n.ljlog" ||
		fail "export pprof --focus failed"
	ljlog export -q --format pprof -o "$T/a.pb.gz" "$T/n.ljlog" || fail "export pprof failed"
	for si in samples calls; do
		gotool tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 \
			-sample_index=$si "$T/f.pb.gz" 2>/dev/null | sed -n '/flat%/,$p' >"$T/top.ours"
		gotool tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 \
			-focus='phase_b' -sample_index=$si "$T/a.pb.gz" 2>/dev/null |
			sed -n '/flat%/,$p' >"$T/top.anchor"
		# Flat, cum and name, sorted: rows of one weight come in any order
		# (the two tables' percentages differ).
		awk '{print $1, $4, $NF}' "$T/top.ours" | LC_ALL=C sort >"$T/t1"
		awk '{print $1, $4, $NF}' "$T/top.anchor" | LC_ALL=C sort >"$T/t2"
		cmp -s "$T/t1" "$T/t2" ||
			{ diff "$T/t2" "$T/t1" | head >&2; fail "pprof --focus, $si: flat and cum differ from go tool pprof -focus"; }
	done
	ok "export pprof --focus phase_b: go tool pprof -top gives the flat and cum of -focus=phase_b on the whole export"
fi
ok "flame and speedscope --from-mark B: phase A left out"

# -- Errors ------------------------------------------------------------------------
rc=0
ljlog report --focus '(' "$T/n.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
expect_eq "report --focus '(': exit status" 2 "$rc"
grep -q "focus '('" "$T/e.err" || { show "$T/e.err"; fail "bad --focus: no message"; }
rc=0
ljlog folded --from 2s --to 1s "$T/n.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
expect_eq "folded --from 2s --to 1s: exit status" 2 "$rc"
rc=0
ljlog report --from-mark nosuch "$T/n.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
expect_eq "report --from-mark nosuch: exit status" 1 "$rc"
grep -q "no mark 'nosuch'; its marks: \"B\"" "$T/e.err" || { show "$T/e.err"; fail "--from-mark nosuch: the marks are not listed"; }
rc=0
ljlog report --from 1x "$T/n.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
expect_eq "report --from 1x: exit status" 2 "$rc"
ok "errors: a bad expression, --to before --from, a bad time (exit 2); a missing mark (exit 1, the marks listed)"
