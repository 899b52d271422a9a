#!/usr/bin/env bash
# ljlog e2e: `ljlog annotate` (issue 27). annotate.lua, with calls, alloc
# and samples (JIT off: exact calls):
# - hot(), load()ed from a string without a name: its lines and text are
#   the string's (from the log), the samples on its lines add up to its
#   samples in the report (with the builtins it calls), its calls on the line that defines it;
# - filler(), in the file: lines 15 to 20 as the file has them, the
#   allocations at line 17 the report's site figures;
# - cold(), load()ed as "=named": its lines without text and a note;
# - the file moved away: "source not found", and --source-dir finds it;
# - the demo, JIT on, samples only: every routine's samples on its rows
#   (line ? for no line known), nothing not recorded shown as 0;
# - no function matching --function: exit 1.
. "$(dirname "$0")/lib.sh"

case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) skip "the samples' places cannot be relied on under ThreadSanitizer (signals wait for its sync points), and the lines are judged on them" ;;
esac

mkdir -p "$T/src" "$T/moved"
cp "$E2E/annotate.lua" "$T/src/annotate.lua"
profile "file=$T/a.ljlog,calls,alloc,sample=1ms" "$T/src/annotate.lua" >"$T/a.out" 2>"$T/a.err" ||
	{ show "$T/a.err"; fail "the profiled run failed"; }
check_complete "$T/a.ljlog"
report_json "$T/a.ljlog" "$T/a.json"

# check NAME FIRST LAST SOURCE ANNOTATE-OUTPUT: the routine NAME's lines
# FIRST..LAST with the text of SOURCE's lines (SOURCE "-": no text), the
# samples adding up to its self samples, its calls on FIRST, the
# allocations per line as the report's sites.
cat >"$T/check.py" <<'PY'
import json, re, sys
name, first, last, src, out, rep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
d = json.load(open(rep))
fn = [f for f in d["functions"] if f["kind"] == "lua" and f["name"].startswith(name + " ")][0]
text = open(out).read()
m = re.search(r"^ROUTINE %s .*?\n(.*?)(?=^ROUTINE |\Z)" % re.escape(name), text, re.S | re.M)
if not m:
    sys.exit("no ROUTINE %s in\n%s" % (name, text))
rows = []
samples = 0
for ln in m.group(1).splitlines()[3:]:
    cols, srcl = ln[:58], ln[60:]
    f = cols.split()
    if f[-1] == "?":  # samples at no line known: counted, no line
        samples += int(f[0])
        continue
    rows.append((int(f[-1]), srcl, cols))
lines = [r[0] for r in rows]
if lines != list(range(first, last + 1)):
    sys.exit("%s: lines %s, expected %d to %d" % (name, lines, first, last))
want = open(src).read().split("\n") if src != "-" else None
sites = {s["line"]: s for s in d["alloc_sites"] if s["function"] == fn["name"]}
for l, s, cols in rows:
    if want is not None and s != want[l - 1]:
        sys.exit("%s line %d: %r, the source has %r" % (name, l, s, want[l - 1]))
    if want is None and s != "":
        sys.exit("%s line %d: text %r where there is no source" % (name, l, s))
    c = cols[:9].strip()
    samples += int(c) if c else 0
    calls = cols[10:19].strip()
    if l == first and int(calls or 0) != fn["calls"]:
        sys.exit("%s: calls %s on line %d, the report has %d" % (name, calls, l, fn["calls"]))
    if l != first and calls:
        sys.exit("%s: calls on line %d" % (name, l))
    al = cols[32:40].strip()
    if int(al or 0) != sites.get(l, {}).get("alloc_count", 0):
        sys.exit("%s line %d: %s allocations, the report's site has %s"
                 % (name, l, al, sites.get(l, {}).get("alloc_count", 0)))
if samples != fn["samples_lua"]:
    sys.exit("%s: %d samples on its lines, the report has %d (samples_lua)" % (name, samples, fn["samples_lua"]))
PY
printf 'local function hot(n)\n\tlocal s = 0\n\tfor i = 1, n do\n\t\ts = (s * 3 + i) %% 1000003\n\tend\n\treturn s\nend\nreturn hot\n' >"$T/hot.src"
ljlog annotate -f '^hot ' "$T/a.ljlog" >"$T/hot.txt" 2>"$T/hot.err" || { show "$T/hot.err"; fail "annotate -f hot failed"; }
grep -q "source: the chunk's string, kept in the log" "$T/hot.txt" || { show "$T/hot.txt"; fail "hot: the source is not the log's"; }
python3 "$T/check.py" hot 1 7 "$T/hot.src" "$T/hot.txt" "$T/a.json" || fail "annotate hot (a load()ed string)"
[ "$(json_get "$T/a.json" '[f for f in d["functions"] if f["name"].startswith("hot ")][0]["samples"] >= 10')" = true ] ||
	fail "hot: fewer than 10 samples to compare"
ok "annotate hot(), load()ed from a string: its lines and text from the log, samples and calls as the report"

ljlog annotate -f '^filler ' "$T/a.ljlog" >"$T/fi.txt" 2>"$T/fi.err" || { show "$T/fi.err"; fail "annotate -f filler failed"; }
python3 "$T/check.py" filler 15 20 "$T/src/annotate.lua" "$T/fi.txt" "$T/a.json" || fail "annotate filler (in the file)"
ok "annotate filler(): lines 15-20 as the file has them, its allocations per line as the report's sites"

ljlog annotate -f '^cold ' "$T/a.ljlog" >"$T/co.txt" 2>"$T/co.err" || { show "$T/co.err"; fail "annotate -f cold failed"; }
grep -q 'chunk "named" has no source file, and the log keeps none' "$T/co.txt" || { show "$T/co.txt"; fail "cold: no note"; }
python3 "$T/check.py" cold 1 3 - "$T/co.txt" "$T/a.json" || fail "annotate cold (no source)"
ok "annotate cold(), load()ed as \"=named\": its lines without text, and a note"

mv "$T/src/annotate.lua" "$T/moved/annotate.lua"
ljlog annotate -f '^filler ' "$T/a.ljlog" >"$T/mv.txt" 2>&1 || fail "annotate of a moved source failed"
grep -q "source not found: $T/src/annotate.lua (try --source-dir DIR)" "$T/mv.txt" || { show "$T/mv.txt"; fail "moved source: no note"; }
ljlog annotate -f '^filler ' --source-dir "$T/moved" "$T/a.ljlog" >"$T/sd.txt" 2>&1 || fail "annotate --source-dir failed"
grep -q "source: $T/moved/annotate.lua" "$T/sd.txt" || { show "$T/sd.txt"; fail "--source-dir: not found there"; }
python3 "$T/check.py" filler 15 20 "$T/moved/annotate.lua" "$T/sd.txt" "$T/a.json" || fail "annotate --source-dir"
ok "a moved source: 'source not found', and --source-dir finds it by its base name"

# A log of samples only, the JIT on (the demo): every routine's samples
# are on its lines or on the row of no line known (line ?, a trace's C
# helper), the builtins' it calls with them (samples_lua); what was not recorded says so, here, in the JSON report (null)
# and in the callers tree (-), never as a count of 0.
profile "file=$T/j.ljlog,nodefaults,sample=1ms" "$top_srcdir/examples/demo.lua" >"$T/j.out" 2>"$T/j.err" ||
	{ show "$T/j.err"; fail "the demo's profiled run failed"; }
report_json "$T/j.ljlog" "$T/j.json"
ljlog annotate -n 0 "$T/j.ljlog" >"$T/j.txt" 2>"$T/j.err2" || { show "$T/j.err2"; fail "annotate -n 0 of the demo failed"; }
ljlog report --callers '^distance ' "$T/j.ljlog" >"$T/jc.txt" 2>"$T/jc.err" || { show "$T/jc.err"; fail "report --callers of the demo failed"; }
python3 - "$T/j.txt" "$T/j.json" "$T/jc.txt" "$test_name" <<'PY' || fail "the demo's samples-only views"
import json, re, sys
out, rep, callers, test = sys.argv[1:]
d = json.load(open(rep))
bad = []
for f in d["functions"]:
    for k in ("calls", "total_ns", "self_ns", "alloc_count", "alloc_bytes"):
        if f[k] is not None:
            bad.append("JSON %s: %s %r, not null (not recorded)" % (f["name"], k, f[k]))
fns = {f["name"]: f for f in d["functions"]}
text = open(out).read()
n = unknown = 0
for m in re.finditer(r"^ROUTINE ([^\n]*)\n(.*?)(?=^ROUTINE |\Z)", text, re.S | re.M):
    name, body = m.group(1), m.group(2).splitlines()
    n += 1
    if "calls: not recorded" not in body[1] or "allocated: not recorded" not in body[1]:
        bad.append("%s: heading %r" % (name, body[1]))
    total = 0
    for ln in body[3:]:
        c = ln[:9].strip()
        total += int(c) if c else 0
        if ln[52:58].strip() == "?":
            unknown += int(c)
    if total != fns[name]["samples_lua"]:
        bad.append("%s: %d samples on its rows, the report has %d (samples_lua)" % (name, total, fns[name]["samples_lua"]))
if n < 3:
    bad.append("%d routines annotated, expected the demo's functions" % n)
rows = open(callers).read().splitlines()[2:]
if not rows or any(not re.match(r"\s+-\s+-\s+\d+\s", r) for r in rows):
    bad.append("callers tree rows without '-' for calls and time: %r" % rows[:3])
if bad:
    sys.exit("\n".join(bad))
print("ok: %s: the demo's samples-only views: %d routines, their samples all on their rows (%d at no line known); JSON calls and allocations null; callers tree '-'" % (test, n, unknown))
PY

rc=0
ljlog annotate -f nosuch "$T/a.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
expect_eq "annotate -f nosuch: exit status" 1 "$rc"
ok "no function matching --function: exit 1"
