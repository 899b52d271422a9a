#!/usr/bin/env bash
# ljlog e2e: `ljlog annotate` (issue 27). annotate.lua, with calls, alloc
# and samples (JIT off: exact calls):
# - hot(), load()ed from a string without a name: its lines and text are
#   the string's (from the log), the samples on its lines add up to its
#   self samples in the report, its calls on the line that defines it;
# - filler(), in the file: lines 15 to 20 as the file has them, the
#   allocations at line 17 the report's site figures;
# - cold(), load()ed as "=named": its lines without text and a note;
# - the file moved away: "source not found", and --source-dir finds it;
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
for ln in m.group(1).splitlines()[3:]:
    cols, srcl = ln[:58], ln[60:]
    f = cols.split()
    rows.append((int(f[-1]), srcl, cols))
lines = [r[0] for r in rows]
if lines != list(range(first, last + 1)):
    sys.exit("%s: lines %s, expected %d to %d" % (name, lines, first, last))
want = open(src).read().split("\n") if src != "-" else None
samples = 0
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
if samples != fn["samples"]:
    sys.exit("%s: %d samples on its lines, the report has %d" % (name, samples, fn["samples"]))
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

rc=0
ljlog annotate -f nosuch "$T/a.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
expect_eq "annotate -f nosuch: exit status" 1 "$rc"
ok "no function matching --function: exit 1"
