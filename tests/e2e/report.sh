#!/usr/bin/env bash
# ljlog e2e: the report says what it measured (issue: "a profile that tells
# the truth", part 4).
#  1. Samples only: the function table shows the sample columns (self,
#     self%, total, total%), not zeros for calls and time; the sections of
#     families not recorded (allocation sites, GC) are left out, and the
#     report names them; JSON "recorded" says the same; each function's
#     self samples in the text table equal the JSON's.
#  2. calls,alloc,gc: GC time is the phases from propagate to finalize
#     (JSON gc_ns), LuaJIT's "pause" state is idle time apart (idle_ns),
#     and the text report lists no "pause" among the phases.
#  3. alloc only: the function table shows allocation columns, no call
#     columns; no samples part.
#  4. The default view (issue 25, "the first five minutes"), on a program
#     of 45 functions: a header of at most 5 lines naming the program, what
#     was recorded, what was not and why; "JIT off" with calls, not without;
#     20 rows a table, then "... and K more (-n 0 for all)"; -n 0 all rows
#     but those with nothing in every number; shares and times with units;
#     --sort calls in the order of the JSON's calls; a bad --sort word, or
#     one the log did not record, is one line and exit 2.
. "$(dirname "$0")/lib.sh"

prog=$E2E/report.lua

run() { # NAME OPTIONS
	local log=$T/$1.ljlog
	profile "file=$log,$2" "$prog" >"$T/$1.out" 2>"$T/$1.err" ||
		{ show "$T/$1.err"; fail "[$1] the profiled run failed"; }
	[ "$(cat "$T/$1.out")" = true ] || fail "[$1] output '$(cat "$T/$1.out")'"
	check_complete "$log"
	report_json "$log" "$T/$1.json"
	ljlog report -n 0 "$log" >"$T/$1.txt" 2>"$T/$1.terr" ||
		{ show "$T/$1.terr"; fail "[$1] ljlog report failed"; }
}

run smp "nodefaults,sample=1ms,wall"
run all "calls,alloc,gc"
run alc "nodefaults,alloc"
run gcs "nodefaults,gc,sample=1ms"

python3 - "$T" <<'PY' || fail "report sections (see above)"
import json, re, sys
T = sys.argv[1]
bad = []
def load(n):
    return json.load(open("%s/%s.json" % (T, n))), open("%s/%s.txt" % (T, n)).read()

def section(txt, title):  # lines of a text section, from its title to a blank line
    m = re.search(r"^%s.*?(?=^\s*$)" % re.escape(title), txt, re.M | re.S)
    return m.group(0).split("\n") if m else None

# 1. samples only
d, txt = load("smp")
rec = d["recorded"]
if rec != {"calls": False, "alloc": False, "gc": False, "sample": True, "jit": False}:
    bad.append("smp: recorded %r" % rec)
if d["samples"] < 50:
    bad.append("smp: only %d samples" % d["samples"])
fns = section(txt, "Functions:")
if not fns:
    bad.append("smp: no function table")
else:
    head = fns[1].split()
    if head[:4] != ["self", "self%", "total", "total%"]:
        bad.append("smp: function table heading %r" % head)
    if "calls" in head or "ms" in head:
        bad.append("smp: call columns without calls: %r" % head)
    bytext = {}
    for l in fns[2:]:
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$", l)
        if m:
            bytext[m.group(3)] = int(m.group(1))
    # The text's self column: a Lua function's samples with the builtins
    # it calls (JSON samples_lua); a builtin's own are its caller's.
    injson = {}
    for f in d["functions"]:
        if f["samples_lua"]:
            injson[f["name"]] = f["samples_lua"]
    # the text label carries the name first ("f (a.lua:3), 4% in tostring")
    for name, n in injson.items():
        hits = [v for k, v in bytext.items()
                if k == name or k.startswith(name + " ") or k.startswith(name + ",")]
        if n not in hits:
            bad.append("smp: %s has %d self samples in JSON, text %r" % (name, n, hits))
    # A sample whose stack could not be read has no self function.
    nself = sum(injson.values())
    if not 0.9 * d["samples"] <= nself <= d["samples"]:
        bad.append("smp: self samples add up to %d of %d samples" % (nself, d["samples"]))
for title in ("Allocation sites:", "GC:"):
    if section(txt, title):
        bad.append("smp: section %r although its family was not recorded" % title)
nr = re.search(r"^  not recorded: (.*)$", txt, re.M)
if not nr or [f for f in ("calls", "alloc", "gc", "jit")
              if not re.search(r"\b%s \(add -e %s\b" % (f, f), nr.group(1))]:
    bad.append("smp: the report does not name the families not recorded, "
               "with how to record them: %r" % (nr and nr.group(0)))
if re.search(r"^\s*by function:", txt, re.M):
    bad.append("smp: samples by function printed twice")

# 2. GC time without pause
d, txt = load("all")
g = d["gc"]
if g["cycles"] < 1:
    bad.append("all: no GC cycle in a churning program")
busy = sum(v for k, v in g["phase_ns"].items() if k != "pause")
if g["gc_ns"] != busy:
    bad.append("all: gc_ns %d, phases without pause add up to %d" % (g["gc_ns"], busy))
if g["idle_ns"] != g["phase_ns"]["pause"]:
    bad.append("all: idle_ns %d, pause %d" % (g["idle_ns"], g["phase_ns"]["pause"]))
if g["idle_ns"] == 0:
    bad.append("all: no idle time between GC cycles measured")
gc = section(txt, "GC:")
if not gc:
    bad.append("all: no GC section")
else:
    if any(re.match(r"\s*pause\s", l) for l in gc):
        bad.append("all: 'pause' listed as a GC phase")
    m = re.search(r"cycles span ([\d.]+) (ms|s) of the run's", "\n".join(gc))
    unit = m and {"ms": 1e6, "s": 1e9}[m.group(2)]
    if not m or abs(float(m.group(1)) * unit - busy) > unit / 1e3:
        bad.append("all: GC cycles' span %r, gc_ns %d" % (gc[:4], busy))
    if "  the collector itself: not measured (its samples in state gc do: add -e sample)" not in gc:
        bad.append("all: no line saying the collector's own time is not measured: %r" % gc[:3])

# 2b. GC with samples: the collector's own share first, from state gc.
dg, tg = load("gcs")
gcg = section(tg, "GC:")
st = dg["states"]
want = "  the collector itself: %d of %d samples, %.1f%% (state gc)" % (
    st.get("gc", 0), dg["samples"], 100.0 * st.get("gc", 0) / dg["samples"])
if len(gcg or []) < 2 or gcg[1] != want:
    bad.append("gcs: GC section's second line %r, want %r" % ((gcg or [])[1:2], want))
    if not any("idle between cycles" in l for l in gc):
        bad.append("all: idle time not reported")
if d["recorded"] != {"calls": True, "alloc": True, "gc": True, "sample": False, "jit": False}:
    bad.append("all: recorded %r" % d["recorded"])

# 3. alloc only
d, txt = load("alc")
fns = section(txt, "Functions:")
head = fns[1].split() if fns else []
if head[:4] != ["allocs", "alloc", "bytes", "alloc%"] or "calls" in head:
    bad.append("alc: function table heading %r" % head)
if section(txt, "Samples:") or section(txt, "GC:"):
    bad.append("alc: samples or GC section without those families")
if not section(txt, "Allocation sites:"):
    bad.append("alc: no allocation sites")

for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
ok "report: sample columns without calls, unrecorded families left out and named, GC time apart from idle"

# -- 4. The default view ------------------------------------------------------
log=$T/many.ljlog
profile "file=$log,nodefaults,calls,alloc,gc" "$E2E/report_many.lua" >"$T/many.out" 2>"$T/many.err" ||
	{ show "$T/many.err"; fail "[many] the profiled run failed"; }
check_complete "$log"
report_json "$log" "$T/many.json"
ljlog report "$log" >"$T/many.txt" 2>"$T/many.terr" || { show "$T/many.terr"; fail "[many] report failed"; }
ljlog report -n 0 "$log" >"$T/many0.txt" 2>&1 || fail "[many] report -n 0 failed"
ljlog report -n 0 --sort calls "$log" >"$T/manyc.txt" 2>&1 || fail "[many] report --sort calls failed"
for w in bogus self; do
	rc=0
	ljlog report --sort $w "$T/smp.ljlog" >"$T/sort.out" 2>"$T/sort.err" || rc=$?
	[ $w = self ] && { expect_eq "report --sort self on a sample log: exit status" 0 "$rc"; continue; }
	expect_eq "report --sort $w: exit status" 2 "$rc"
	expect_eq "report --sort $w: lines on stderr" 1 "$(wc -l <"$T/sort.err")"
	grep -q "^ljlog report: --sort: 'bogus' is not self, total, calls, samples or alloc$" "$T/sort.err" ||
		{ show "$T/sort.err"; fail "report --sort bogus: message"; }
done
rc=0
ljlog report --sort calls "$T/smp.ljlog" >"$T/sort.out" 2>"$T/sort.err" || rc=$?
expect_eq "report --sort calls on a sample log: exit status" 2 "$rc"
expect_eq "report --sort calls on a sample log: lines on stderr" 1 "$(wc -l <"$T/sort.err")"
grep -q "did not record calls" "$T/sort.err" || { show "$T/sort.err"; fail "report --sort calls on a sample log: message"; }
ljlog report "$T/smp.ljlog" >"$T/smp20.txt" 2>&1 || fail "[smp] report failed"
ljlog report "$T/all.ljlog" >"$T/all20.txt" 2>&1 || fail "[all] report failed"

python3 - "$T" <<'PY' || fail "the default view (see above)"
import json, re, sys
T = sys.argv[1]
bad = []
UNIT = re.compile(r"^[\d.]+ (ms|s)$")
BYTES = re.compile(r"^[\d.]+ (B|KiB|MiB|GiB)$")

def text(n):
    return open("%s/%s.txt" % (T, n)).read()

def header(txt):  # the lines before the first blank one
    return txt.split("\n\n", 1)[0].split("\n")

def table(txt, title):  # heading cells, rows of cells, the lines after them
    lines = txt.split("\n")
    i = next((k for k, l in enumerate(lines) if l.startswith(title)), None)
    if i is None:
        return None, [], []
    head = re.split(r"\s{2,}", lines[i + 1].strip())
    rows, rest = [], []
    for l in lines[i + 2:]:
        if not l.strip():
            break
        cells = re.split(r"\s{2,}", l.strip(), maxsplit=len(head) - 1)
        (rows if len(cells) == len(head) and not l.strip().startswith(("\u2026", "(")) else rest).append(
            cells if len(cells) == len(head) else l)
    return head, rows, rest

d = json.load(open("%s/many.json" % T))
shown = ("calls", "total_ns", "self_ns", "alloc_count", "alloc_bytes")
some = [f for f in d["functions"] if any(f[k] for k in shown)]
none = len(d["functions"]) - len(some)
if len(some) <= 45:
    bad.append("many: only %d functions with something" % len(some))

# Header: at most 5 lines, the program, recorded, not recorded and why, JIT off.
for n in ("many", "smp20", "all20", "alc"):
    h = header(text(n))
    if len(h) > 5:
        bad.append("%s: header of %d lines: %r" % (n, len(h), h))
    if not re.match(r"^ljlog report: \S*luajit\S* \(pid \d+\), ran [\d.]+ (ms|s) \(log .*, complete\)$", h[0]):
        bad.append("%s: first line %r" % (n, h[0]))
    if any("time base" in l for l in h):
        bad.append("%s: the time base in the default header" % n)
    jit = any(l.startswith("  JIT off") for l in h)
    if jit != (n in ("many", "all20")):
        bad.append("%s: JIT off line %s" % (n, "present without calls" if jit else "missing with calls"))
if not re.search(r"^  recorded: calls alloc gc$", text("many"), re.M):
    bad.append("many: no 'recorded: calls alloc gc'")
if not re.search(r"^  not recorded: sample \(add -e sample .*\), jit \(add -e jit", text("many"), re.M):
    bad.append("many: no 'not recorded: sample (...), jit (...)'")

# 20 rows, then the more line.
head, rows, rest = table(text("many"), "Functions:")
if head[:5] != ["self", "self%", "total", "calls", "allocs"]:
    bad.append("many: heading %r" % head)
if len(rows) != 20:
    bad.append("many: %d rows by default, not 20" % len(rows))
more = "  \u2026 and %d more (-n 0 for all)" % (len(some) - 20)
if none:
    more += "; %d rows with nothing left out" % none
if rest[:1] != [more]:
    bad.append("many: after the rows %r, not %r" % (rest[:1], more))
for r in rows:
    if not UNIT.match(r[0]) or not UNIT.match(r[2]) or not BYTES.match(r[5]):
        bad.append("many: times or bytes without a unit: %r" % r)
        break
    if not re.match(r"^\d+\.\d%$", r[1]) or not re.match(r"^\d+\.\d%$", r[6]):
        bad.append("many: no shares: %r" % r)
        break
share = sum(float(r[1][:-1]) for r in table(text("many0"), "Functions:")[1])
if abs(share - 100) > 0.05 * len(some):
    bad.append("many: self%% adds up to %.1f" % share)

# -n 0: every function with something, none without.
head, rows0, rest = table(text("many0"), "Functions:")
if len(rows0) != len(some):
    bad.append("many -n 0: %d rows, %d functions with something" % (len(rows0), len(some)))
for r in rows0:
    if all(re.match(r"^0(\.0+)?( ms| s| B)?$", c) for c in (r[0], r[2], r[3], r[4], r[5])):
        bad.append("many -n 0: a row with nothing: %r" % r)

# --sort calls: the JSON's calls, in order.
calls = {}
for f in d["functions"]:
    calls.setdefault(f["name"], set()).add(f["calls"])
head, rowsc, _ = table(text("manyc"), "Functions:")
got = [int(r[3]) for r in rowsc]
if got != sorted(got, reverse=True) or len(got) != len(some):
    bad.append("many --sort calls: calls %r" % got)
for r in rowsc:
    name = r[-1]
    want = calls.get(name) or next((v for k, v in calls.items() if name.startswith(k + " [")), None)
    if not want or int(r[3]) not in want:
        bad.append("many --sort calls: %r has %s calls, JSON %r" % (name, r[3], want))
if not re.search(r"^Functions: \d+, by calls", text("manyc"), re.M):
    bad.append("many --sort calls: the title does not say 'by calls'")
gens = [r for r in rowsc if re.match(r"^gen\d+:1$", r[-1])]
if len(gens) != 45:
    bad.append("many: %d gen functions, not 45" % len(gens))

for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
ok "report: default view of $(json_get "$T/many.json" 'len(d["functions"])') functions: short header, JIT off with calls, 20 rows and the more line, -n 0, --sort calls"
