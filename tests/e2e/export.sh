#!/usr/bin/env bash
# ljlog e2e: `ljlog export` (speedscope, chrome), checked against the
# reader's own figures (no browser here: export_speedscope.sh opens the
# files in speedscope).
# - usage: --help, unknown format, unreadable file, nothing to export, a
#   truncated log (exported with a warning), a corrupt one (exit 3);
# - export.lua (tail call, errors through pcall, coroutines yielding from
#   nested calls, one left suspended) under nodefaults,calls,sample: its
#   call counts first equal a debug.sethook counter's (calls_match), then
#   the speedscope call-tree profiles give exactly the report's calls and
#   self time per function, the sampled profile the samples per function
#   of `ljlog folded`, and the Chrome trace nests per track with every
#   track named (export_check.py); a short run (export.lua 20 20) keeps the
#   evented profiles per coroutine, which give the report's calls and
#   total time too;
# - the size bound: a calls log of a few MB exported in every format stays
#   under 10x its size (speedscope aggregates, chrome is cut with a note),
#   and the cut chrome file still nests;
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

# A short run: small enough for the evented profiles per coroutine.
profile "file=$T/short.ljlog,nodefaults,calls,sample=1ms" "$E2E/export.lua" 20 20 >/dev/null 2>"$T/err" ||
	{ show "$T/err"; fail "export.lua 20 20: the run failed"; }
check_complete "$T/short.ljlog"
report_json "$T/short.ljlog" "$T/short.json"
ljlog export -f speedscope -o "$T/short.speedscope.json" "$T/short.ljlog" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f speedscope (short run) failed"; }
grep -q "too many for evented" "$T/err" && { show "$T/err"; fail "short run: evented profiles left out"; }
$CHECK speedscope "$T/short.speedscope.json" "$T/short.json" >"$T/short.check" ||
	{ cat "$T/short.check"; fail "speedscope export of export.lua 20"; }
cat "$T/short.check"
python3 - "$T/short.speedscope.json" <<'PY' || fail "speedscope (short run): the evented profiles"
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["profiles"]]
ev = [n for n in names if "coroutine" in n]
assert len(ev) == 3, names  # main, the finished one, the suspended one
assert "VM 1 main coroutine" in names, names
print("ok: speedscope (short run): profiles %s" % names)
PY

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
assert names[:2] == ["call time (self time by call path)", "calls (by call path)"], names
assert "VM 1 samples" in names, names
fr = {f["name"]: f for f in d["shared"]["frames"]}
for n, line in (("tailer", 19), ("thrower", 23), ("stepper", 38), ("gen", 44)):
    k = [x for x in fr if x.startswith(n + " (")]
    assert k, (n, sorted(fr))
    f = fr[k[0]]
    assert f["file"].endswith("export.lua") and f["line"] == line, f
print("ok: speedscope: profiles %s; frames carry file and line" % names)
PY
# The short run's Chrome trace is whole; the long one's is cut at 8x the
# log's size (its calls come first, the samples are past the cut).
ljlog export -f chrome -o - "$T/short.ljlog" >"$T/s.chrome.json" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f chrome -o - (short run) failed"; }
grep -q "events left out" "$T/err" && { show "$T/err"; fail "chrome (short run): cut"; }
$CHECK chrome "$T/s.chrome.json" || fail "chrome export of export.lua 20 20"
ljlog export -f chrome -o - "$log" >"$T/a.chrome.json" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f chrome -o - failed"; }
grep -q "events left out" "$T/err" || { show "$T/err"; fail "chrome: the export of export.lua is not cut"; }
$CHECK chrome "$T/a.chrome.json" || fail "chrome export of export.lua"
python3 - "$T/s.chrome.json" <<'PY' || fail "chrome: the expected tracks"
import json, sys
d = json.load(open(sys.argv[1]))
assert "otherData" not in d, d["otherData"]
t = {e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"main coroutine"} <= t, t
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

# -- The size bound: a calls log of a few MB ---------------------------------------

# Millions of calls through a few distinct stacks (some recursive).
cat >"$T/many.lua" <<'LUA'
local N = tonumber(arg[1])
local function leaf(n) return n % 7 end
local function mid(n) return leaf(n) + leaf(n + 1) end
local function top(n) return mid(n) + leaf(n) end
local function rec(d, n) if d == 0 then return top(n) end return rec(d - 1, n) + 0 end
local s = 0
for i = 1, N do s = s + rec(i % 8, i) end
print(s)
LUA
profile "file=$T/many.ljlog,nodefaults,calls" "$T/many.lua" 80000 >/dev/null 2>"$T/many.err" ||
	{ show "$T/many.err"; fail "the many-calls run failed"; }
check_complete "$T/many.ljlog"
report_json "$T/many.ljlog" "$T/many.r.json"
lsize=$(stat -c %s "$T/many.ljlog")
[ "$lsize" -gt 2000000 ] || fail "many.lua: a log of $lsize bytes, expected a few MB"
bounded() { # FILE WHAT: FILE is under 10x the log
	local s
	s=$(stat -c %s "$1")
	[ "$s" -le $((lsize * 10)) ] || fail "$2: $s bytes, over 10x the log's $lsize"
	echo "ok: $test_name: $2: $s bytes for a log of $lsize ($(awk "BEGIN{printf \"%.2f\", $s/$lsize}")x)"
}
ljlog export -f speedscope -o "$T/many.speedscope.json" "$T/many.ljlog" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f speedscope (many) failed"; }
bounded "$T/many.speedscope.json" "speedscope"
grep -q "note: to stay under 8x the log's size: the calls are too many for evented profiles" "$T/err" ||
	{ show "$T/err"; fail "speedscope (many): no note that the evented profiles are left out"; }
$CHECK speedscope "$T/many.speedscope.json" "$T/many.r.json" || fail "speedscope export of many.lua"
ljlog export -f chrome -o "$T/many.chrome.json" "$T/many.ljlog" 2>"$T/err" ||
	{ show "$T/err"; fail "export -f chrome (many) failed"; }
bounded "$T/many.chrome.json" "chrome"
grep -q "note: to stay under 8x the log's size: [0-9]* events left out from" "$T/err" ||
	{ show "$T/err"; fail "chrome (many): no note that events are left out"; }
$CHECK chrome "$T/many.chrome.json" || fail "the cut chrome export of many.lua"
python3 - "$T/many.chrome.json" <<'PY' || fail "chrome (many): the cut is marked"
import json, sys
d = json.load(open(sys.argv[1]))
assert "events left out" in d["otherData"]["ljlog_cut"], d.get("otherData")
cut = [e for e in d["traceEvents"] if e["ph"] == "i" and e["name"].startswith("ljlog: export cut here")]
assert len(cut) == 1, cut
print("ok: chrome (many): otherData.ljlog_cut = %r, an instant at %r us" % (d["otherData"]["ljlog_cut"], cut[0]["ts"]))
PY
ljlog export -q -f pprof -o "$T/many.pb.gz" "$T/many.ljlog" 2>"$T/err" || { show "$T/err"; fail "export -f pprof (many) failed"; }
[ -s "$T/err" ] && { show "$T/err"; fail "export -q -f pprof: something on stderr"; }
bounded "$T/many.pb.gz" "pprof"
ljlog flame -o "$T/many.html" "$T/many.ljlog" || fail "flame (many) failed"
bounded "$T/many.html" "flame"
set -- "$T"/*.tmp.*
[ -e "$1" ] && fail "temporary files left: $*"
ok "a calls log of $lsize bytes: every export under 10x its size, no temporary file left, export -q -f pprof silent"

# -- A killed export leaves no OUT ---------------------------------------------------

# The log is a FIFO nobody writes yet: the export has made its temporary
# file and waits in open(), so the kill lands mid-way, whatever the speed.
# (SIGINT is handled as SIGTERM is, but a background job ignores it.)
mkfifo "$T/in.fifo"
for sig in KILL TERM HUP; do
	# Started with SIGHUP ignored (nohup), the export keeps ignoring it
	# and would wait on its FIFO for ever.
	if [ "$sig" = HUP ] && [ -n "$(trap -p HUP)" ]; then
		echo "skip: SIGHUP is ignored by whoever started the tests (nohup)"
		continue
	fi
	rm -f "$T/k.json" "$T"/k.json.tmp.*
	"$LJLOG" export -f chrome -o "$T/k.json" "$T/in.fifo" 2>"$T/k.err" &
	kpid=$!
	track_pid "$kpid"
	tmp_seen() { [ -e "$T/k.json.tmp.$kpid" ]; }
	wait_for 30 tmp_seen || fail "export: no temporary file k.json.tmp.$kpid appeared"
	kill -"$sig" "$kpid"
	rc=0
	wait "$kpid" || rc=$?
	[ "$rc" -gt 128 ] || fail "SIG$sig: export exit status $rc, expected death by the signal"
	[ -e "$T/k.json" ] && fail "SIG$sig: the killed export left OUT"
	if [ "$sig" = KILL ]; then
		rm -f "$T/k.json.tmp.$kpid" # SIGKILL cannot be caught: it stays
	else
		[ -e "$T/k.json.tmp.$kpid" ] && fail "SIG$sig: the temporary file is left"
	fi
	ok "SIG$sig during an export: no OUT$([ "$sig" = KILL ] || echo ", no temporary file")"
done
