#!/usr/bin/env bash
# ljlog e2e: `ljlog export` (speedscope, chrome), checked against the
# reader's own figures (no browser here: export_speedscope.sh opens the
# files in speedscope).
# - usage: --help, unknown format, unreadable file, nothing to export, a
#   truncated log (exported with a warning), a corrupt one (exit 3);
# - export.lua (tail call, errors through pcall, coroutines yielding from
#   nested calls, one left suspended) under nodefaults,calls,sample: its
#   call counts first equal a debug.sethook counter's (calls_match), then
#   the speedscope evented profiles give exactly the report's calls and
#   total time per function, the sampled profile the samples per function
#   of `ljlog folded`, and the Chrome trace nests per track with every
#   track named (export_check.py);
# - export_sample.lua with the JIT on (sample, alloc, gc, jit): samples in
#   traces as in `ljlog folded`, allocated bytes equal to the report's, GC
#   phases, heap counter and trace events in the Chrome trace.
. "$(dirname "$0")/lib.sh"
CHECK="python3 $E2E/export_check.py"

# -- Usage ---------------------------------------------------------------------

ljlog export --help >"$T/help" || fail "export --help: nonzero exit"
grep -q speedscope "$T/help" && grep -q chrome "$T/help" ||
	{ show "$T/help"; fail "export --help does not list the formats"; }
ljlog --help | grep -q '^  export' || fail "ljlog --help does not list export"
rc=0
ljlog export -f nope -o "$T/x" "$T/none.ljlog" 2>"$T/err" || rc=$?
expect_eq "unknown format: exit status" 2 "$rc"
grep -q "unknown format 'nope'" "$T/err" || { show "$T/err"; fail "unknown format: no message"; }
rc=0
ljlog export -f speedscope -o "$T/x" "$T/none.ljlog" 2>"$T/err" || rc=$?
expect_eq "missing file: exit status" 2 "$rc"
grep -q "cannot open $T/none.ljlog" "$T/err" || { show "$T/err"; fail "missing file: no message"; }
[ ! -e "$T/x" ] || fail "missing file: an output file was made"
rc=0
ljlog export "$T/none.ljlog" 2>"$T/err" || rc=$?
expect_eq "no --format: exit status" 2 "$rc"
ok "usage: --help, unknown format, unreadable file, no --format"

# A log with nothing either format shows (allocations only: chrome has no
# frame, sample or GC event; a GC-only log has nothing for speedscope).
profile "file=$T/alloc.ljlog,nodefaults,alloc" "$E2E/export_sample.lua" >/dev/null ||
	fail "the alloc-only run failed"
rc=0
ljlog export -f chrome -o "$T/x.json" "$T/alloc.ljlog" 2>"$T/err" || rc=$?
expect_eq "chrome export of an alloc-only log: exit status" 1 "$rc"
grep -q "no calls, samples or GC events to export" "$T/err" || { show "$T/err"; fail "chrome, nothing to export: no message"; }
[ ! -e "$T/x.json" ] || fail "chrome, nothing to export: the output file was left"
profile "file=$T/gc.ljlog,nodefaults,gc" "$E2E/export_sample.lua" >/dev/null ||
	fail "the gc-only run failed"
rc=0
ljlog export -f speedscope -o "$T/x.json" "$T/gc.ljlog" 2>"$T/err" || rc=$?
expect_eq "speedscope export of a gc-only log: exit status" 1 "$rc"
grep -q "no calls, samples or allocations to export" "$T/err" || { show "$T/err"; fail "speedscope, nothing to export: no message"; }
mkfifo "$T/fifo"
(cat "$T/fifo" >/dev/null &)
rc=0
ljlog export -f chrome -o "$T/fifo" "$T/alloc.ljlog" 2>"$T/err" || rc=$?
expect_eq "chrome export of an alloc-only log into a FIFO: exit status" 1 "$rc"
[ -p "$T/fifo" ] || fail "nothing to export into a FIFO: the FIFO was removed (only a regular file may be)"
ok "a log with nothing to export in the format: exit 1 with a message, no file (a FIFO given as output is kept)"

# -- Calls, coroutines, errors, tail calls; samples with the JIT off --------------

calls_match "$E2E/export.lua" "nodefaults,calls,sample=1ms"
ok "export.lua: call counts in the report equal the hook counter's"
log=$T/calls.ljlog
ljlog export -f speedscope -o "$T/a.speedscope.json" "$log" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f speedscope failed"; }
grep -q "note: the speedscope format leaves out: GC phases" "$T/err" ||
	{ show "$T/err"; fail "speedscope: no note on what it leaves out"; }
ljlog folded "$log" >"$T/a.folded" || fail "ljlog folded failed"
$CHECK speedscope "$T/a.speedscope.json" "$T/calls.json" "$T/a.folded" || fail "speedscope export of export.lua"
python3 - "$T/a.speedscope.json" <<'PY' || fail "speedscope: the expected profiles and frames"
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["profiles"]]
ev = [n for n in names if "coroutine" in n]
assert len(ev) == 3, names  # main, the finished one, the suspended one
assert "VM 1 main coroutine" in names, names
assert any(p["type"] == "sampled" and p["unit"] == "nanoseconds" for p in d["profiles"]), names
fr = {f["name"]: f for f in d["shared"]["frames"]}
for n, line in (("tailer", 19), ("thrower", 23), ("stepper", 38), ("gen", 44)):
    k = [x for x in fr if x.startswith(n + " (")]
    assert k, (n, sorted(fr))
    f = fr[k[0]]
    assert f["file"].endswith("export.lua") and f["line"] == line, f
print("ok: speedscope: profiles %s; frames carry file and line" % names)
PY
ljlog export -f chrome -o - "$log" >"$T/a.chrome.json" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f chrome -o - failed"; }
$CHECK chrome "$T/a.chrome.json" || fail "chrome export of export.lua"
python3 - "$T/a.chrome.json" <<'PY' || fail "chrome: the expected tracks"
import json, sys
d = json.load(open(sys.argv[1]))
t = {e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"main coroutine", "samples"} <= t, t
assert sum(1 for x in t if x.startswith("coroutine ")) == 2, t
n = {e["name"] for e in d["traceEvents"] if e["ph"] == "B"}
assert any(x.startswith("stepper (") for x in n) and "coroutine.yield" in n, n
print("ok: chrome: tracks %s" % sorted(t))
PY
ok "export.lua: speedscope and chrome agree with the report and folded"

# A truncated log is exported up to where it ends, with a warning.
size=$(stat -c %s "$log")
head -c $((size * 2 / 3)) "$log" >"$T/cut.ljlog"
rc=0
ljlog export -f speedscope -o "$T/cut.json" "$T/cut.ljlog" 2>"$T/err" || rc=$?
expect_eq "truncated log: exit status" 0 "$rc"
grep -q "warning: log truncated, exporting what is there" "$T/err" ||
	{ show "$T/err"; fail "truncated log: no warning"; }
ljlog report --json "$T/cut.ljlog" >"$T/cut.r.json" 2>/dev/null || true
$CHECK speedscope "$T/cut.json" "$T/cut.r.json" || fail "speedscope export of the truncated log"
ok "a truncated log: exported with a warning, still nested and equal to its report"

# A corrupt log: what comes before the damage is exported, exit status 3.
python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0xff
open(sys.argv[2], "wb").write(b)' "$log" "$T/bad.ljlog"
rc=0
ljlog export -f chrome -o "$T/bad.json" "$T/bad.ljlog" 2>"$T/err" || rc=$?
expect_eq "corrupt log: exit status" 3 "$rc"
grep -q "corrupt log, exported the part before: block" "$T/err" ||
	{ show "$T/err"; fail "corrupt log: no message naming the block"; }
$CHECK chrome "$T/bad.json" || fail "chrome export of the corrupt log"
ok "a corrupt log: the part before the damage exported, exit 3"

# -- JIT on: samples in traces, allocations, GC, trace events ---------------------

profile "file=$T/jit.ljlog,nodefaults,sample=1ms,alloc,gc,jit" "$E2E/export_sample.lua" >/dev/null ||
	fail "the JIT-on run failed"
check_complete "$T/jit.ljlog"
report_json "$T/jit.ljlog" "$T/jit.r.json"
ljlog folded "$T/jit.ljlog" >"$T/jit.folded" || fail "ljlog folded (jit) failed"
ljlog export -q -f speedscope -o "$T/jit.speedscope.json" "$T/jit.ljlog" || fail "export (jit) failed"
$CHECK speedscope "$T/jit.speedscope.json" "$T/jit.r.json" "$T/jit.folded" || fail "speedscope export, JIT on"
ljlog export -q --host -f speedscope -o "$T/jit.host.speedscope.json" "$T/jit.ljlog" ||
	fail "export --host (jit) failed"
python3 - "$T/jit.speedscope.json" "$T/jit.r.json" "$T/jit.host.speedscope.json" <<'PY' || fail "speedscope, JIT on: traces and allocations"
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
def intraces(d):
    names = [f["name"] for f in d["shared"]["frames"]]
    smp = [p for p in d["profiles"] if p["type"] == "sampled" and p["unit"] == "nanoseconds"]
    return sum(1 for p in smp for s in p["samples"] if any(names[i].startswith("trace ") for i in s))
# Lua-first stacks have no trace frame; --host's merged ones do.
assert intraces(d) == 0, "trace frames in Lua-first stacks"
intrace = intraces(json.load(open(sys.argv[3])))
assert intrace > 0, "no sample in a trace (--host)"
al = [p for p in d["profiles"] if p["unit"] == "bytes"]
assert len(al) == 1, [p["name"] for p in d["profiles"]]
assert sum(al[0]["weights"]) == r["heap"]["alloc_bytes"], (sum(al[0]["weights"]), r["heap"]["alloc_bytes"])
assert al[0]["endValue"] == r["heap"]["alloc_bytes"]
print("ok: speedscope, JIT on: no trace frame, with --host %d samples in traces; %d bytes allocated, as in the report"
      % (intrace, r["heap"]["alloc_bytes"]))
PY
ljlog export -q -f chrome -o "$T/jit.chrome.json" "$T/jit.ljlog" || fail "export chrome (jit) failed"
$CHECK chrome "$T/jit.chrome.json" || fail "chrome export, JIT on"
python3 - "$T/jit.chrome.json" "$T/jit.r.json" <<'PY' || fail "chrome, JIT on: GC, heap, JIT"
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
ev = d["traceEvents"]
gc = [e for e in ev if e["ph"] == "B" and e.get("cat") == "gc"]
heap = [e for e in ev if e["ph"] == "C" and e["name"] == "heap"]
jit = [e for e in ev if e["ph"] == "i" and e.get("cat") == "jit"]
smp = [e for e in ev if e["ph"] == "i" and e.get("cat") == "sample"]
assert r["gc"]["cycles"] == 0 or gc, "no GC slice"
assert heap, "no heap counter"
# The counter moves at GC events (and at attach and detach): the report's
# peak heap of the GC events is one of its values.
vals = [e["args"]["bytes"] for e in heap]
assert not r["gc"]["events"] or r["gc"]["peak_heap"] in vals, (max(vals), r["gc"]["peak_heap"])
assert any(e["name"].startswith("trace stop ") for e in jit), "no trace stop"
assert len(smp) == r["samples"], (len(smp), r["samples"])
print("ok: chrome, JIT on: %d GC slices, %d heap counts (the report's peak among them), %d JIT events, %d samples"
      % (len(gc), len(heap), len(jit), len(smp)))
PY
ok "JIT on: samples in traces, allocation bytes, GC, heap and trace events"
