#!/usr/bin/env bash
# ljlog e2e: trace events (`jit`) in the report.
# sample_jit.lua has a hot loop (compiled, with side traces for a frequent
# and a rare branch), a loop that aborts its trace (NYI: a closure made in
# the loop) and calls jit.flush() after each round. Under ljlog
# (sample=250us,wall,jit) the report must list the hot loop's trace
# starting at the loop's chunk:line (from grep, not hard-coded), name
# aborts with their messages and count the flushes; and it must agree with
# LuaJIT's own view of the same run (sample_jitattach.lua runs the program
# with a jit.attach handler of its own, chained to ljlog's: LuaJIT keeps
# one handler per event): the same compiled traces (number, chunk:line,
# root or parent trace), the same aborts (reason, message, count), the
# same number of flushes. (Separate runs would not do: LuaJIT's abort
# penalties are randomised, counts differ from run to run.)
. "$(dirname "$0")/lib.sh"

prog=$E2E/sample_jit.lua
rounds=3
hot_line=$(grep -n -- '-- HOT LOOP' "$prog" | cut -d: -f1)
[ -n "$hot_line" ] || fail "no HOT LOOP marker in $prog"
log=$T/jit.ljlog

luajit_plain "$prog" "$rounds" >"$T/plain.out" 2>"$T/plain.err" ||
	{ show "$T/plain.err"; fail "the unprofiled run failed"; }
profile "file=$log,sample=250us,wall,jit" "$E2E/sample_jitattach.lua" "$T/attach.txt" \
	"$prog" "$rounds" >"$T/out" 2>"$T/err" || { show "$T/err"; fail "the profiled run failed"; }
cmp -s "$T/plain.out" "$T/out" || fail "output '$(cat "$T/out")', unprofiled '$(cat "$T/plain.out")'"
expect_eq "a jit.attach handler (ljlog's) before sample_jitattach.lua's" 1 \
	"$(sed -n 's/^chained\t//p' "$T/attach.txt")"
check_complete "$log"
report_json "$log" "$T/r.json"
python3 - "$T/r.json" "$T/attach.txt" "$prog:$hot_line" <<'PY' || fail "trace events (see above)"
import collections, json, sys
jpath, apath, hot = sys.argv[1:]
d = json.load(open(jpath))
bad = []
traces = d.get("traces")
aborts = d.get("trace_aborts")
flushes = d.get("trace_flushes")
if not isinstance(traces, list) or not isinstance(aborts, list) or not isinstance(flushes, int):
    sys.exit("the report lacks traces, trace_aborts or trace_flushes: %r %r %r" % (traces, aborts, flushes))

# The contract by itself.
if not [t for t in traces if t.get("name") == hot and not t.get("root", t.get("parent"))]:
    bad.append("no root trace starting at %s in traces: %r" % (hot, traces[:8]))
if not aborts or not all(isinstance(a.get("message"), str) and a["message"] for a in aborts):
    bad.append("trace_aborts empty or without messages: %r" % aborts)
elif not [a for a in aborts if "NYI" in a["message"] and a.get("count", 0) >= 1]:
    bad.append("no NYI abort in trace_aborts: %r" % aborts)
if flushes < 1:
    bad.append("trace_flushes %r, expected >= 1" % flushes)

# Against jit.attach.
link = "root" if traces and "root" in traces[0] else "parent"
want_tr, want_ab, want_fl = collections.Counter(), collections.Counter(), 0
for ln in open(apath):
    f = ln.rstrip("\n").split("\t")
    if f[0] == "trace":
        want_tr[(int(f[1]), f[2], int(f[4] if link == "root" else f[3]))] += 1
    elif f[0] == "abort":
        want_ab[(int(f[1]), f[2])] += 1
    elif f[0] == "flush":
        want_fl += 1
got_tr = collections.Counter((t["traceno"], t["name"], t[link]) for t in traces)
got_ab = collections.Counter()
for a in aborts:
    got_ab[(a["reason"], a["message"])] += a["count"]
if got_tr != want_tr:
    bad.append("traces (traceno, start, %s) differ from jit.attach's: only in ljlog %r; only in jit.attach %r"
               % (link, sorted((got_tr - want_tr).elements()), sorted((want_tr - got_tr).elements())))
if got_ab != want_ab:
    bad.append("aborts differ: ljlog %r, jit.attach %r" % (dict(got_ab), dict(want_ab)))
if flushes != want_fl:
    bad.append("trace_flushes %d, jit.attach saw %d" % (flushes, want_fl))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: sample_jit: %d traces (hot loop at %s), %d aborts %r, %d flushes: as jit.attach saw them"
      % (len(traces), hot.rsplit("/", 1)[-1], sum(got_ab.values()), sorted(set(m for _, m in got_ab)), flushes))
PY
