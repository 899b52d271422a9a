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
    injson = {}
    for f in d["functions"]:
        if f["samples"]:
            injson[f["name"]] = f["samples"]
    # the text label carries the name first
    for name, n in injson.items():
        hits = [v for k, v in bytext.items() if k == name or k.startswith(name + " ")]
        if n not in hits:
            bad.append("smp: %s has %d self samples in JSON, text %r" % (name, n, hits))
    # A sample whose stack could not be read has no self function.
    nself = sum(injson.values())
    if not 0.9 * d["samples"] <= nself <= d["samples"]:
        bad.append("smp: self samples add up to %d of %d samples" % (nself, d["samples"]))
for title in ("Allocation sites:", "GC:"):
    if section(txt, title):
        bad.append("smp: section %r although its family was not recorded" % title)
if not re.search(r"not recorded: calls alloc gc jit", txt):
    bad.append("smp: the report does not name the families not recorded")
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
    m = re.search(r"([\d.]+) ms inside cycles", gc[0])
    if not m or abs(float(m.group(1)) * 1e6 - busy) > 1e3:
        bad.append("all: GC heading %r, gc_ns %d" % (gc[0], busy))
    if not any("idle between cycles" in l for l in gc):
        bad.append("all: idle time not reported")
if d["recorded"] != {"calls": True, "alloc": True, "gc": True, "sample": False, "jit": False}:
    bad.append("all: recorded %r" % d["recorded"])

# 3. alloc only
d, txt = load("alc")
fns = section(txt, "Functions:")
head = fns[1].split() if fns else []
if head[:4] != ["allocs", "alloc", "bytes", "frees"] or "calls" in head:
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
