#!/usr/bin/env python3
"""ljlog e2e: independent checks of `ljlog export` files.

  export_check.py speedscope FILE REPORT_JSON [FOLDED]
      The call-tree profiles ("call time", "calls"): per function (by frame
      name, as the innermost frame of a path) the self time and the calls
      equal `ljlog report --json`'s. Evented profiles per coroutine, when
      the file has them (a small log): every one nests (each C closes the
      frame on top, times never go back) and ends balanced; per function,
      the calls (O events, less the frames a resumed coroutine opens again)
      and the total time (the union, per VM, of the times a frame of it is
      open on any coroutine's profile) equal the report's; with
      FOLDED (`ljlog folded` output), the samples per function of the
      sampled profiles (self: innermost frame; total: anywhere in the
      stack) equal the folded stacks', and their weights sum, per VM, to
      the report's intervals times the log's sampling interval.
  export_check.py chrome FILE
      Per track (pid, tid), B and E events nest in file order with the E
      naming its B, times never go back, no X has a negative duration,
      every pid and tid has a name (metadata), counters are numbers.
  export_check.py loaded LOAD_JSON NAME...
      speedscope_load.mjs output: no problem, and each NAME is a symbol of
      some profile.
Prints one line per check; exit 1 with the reason on the first failure.
"""
import json
import sys
from collections import defaultdict


def fail(msg):
    print("export_check: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def folded_name(s):
    return s.replace(";", "_").replace(" ", "_").replace("\n", "_")


def union_length(iv):
    iv.sort()
    total, cur_a, cur_b = 0.0, None, None
    for a, b in iv:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        elif b > cur_b:
            cur_b = b
    if cur_b is not None:
        total += cur_b - cur_a
    return total


def vm_of(name):
    # "VM 3 coroutine 7", "VM 3 main coroutine", "VM 3 samples"
    parts = name.split()
    if len(parts) < 2 or parts[0] != "VM":
        fail("profile name %r does not start with 'VM N'" % name)
    return int(parts[1])


def speedscope(path, report_path, folded_path=None):
    d = json.load(open(path))
    if d.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
        fail("no speedscope $schema")
    frames = d["shared"]["frames"]
    names = [f["name"] for f in frames]
    calls = defaultdict(int)
    intervals = defaultdict(list)  # (vm, name) -> [(a, b)]
    nev = nprof = 0
    for p in d["profiles"]:
        if p["type"] != "evented":
            continue
        nprof += 1
        vm = vm_of(p["name"])
        stack = []  # (frame, at)
        last = p["startValue"]
        closed = None  # the stack a run of closes at one time emptied
        closed_at = None
        reopen_at = None  # resuming: reopening `closed` at this time
        for e in p["events"]:
            nev += 1
            at, fr = e["at"], e["frame"]
            if at < last:
                fail("%s: event at %r before the one before (%r)" % (p["name"], at, last))
            if not 0 <= fr < len(frames):
                fail("%s: frame %r out of range" % (p["name"], fr))
            if e["type"] == "O":
                # A resumed coroutine opens its suspended frames again, all
                # at once, from an empty stack: not calls.
                if not stack and closed and reopen_at is None:
                    reopen_at = at
                if (reopen_at is not None and at == reopen_at and
                        len(stack) < len(closed) and closed[len(stack)] == fr):
                    pass
                else:
                    reopen_at = None
                    closed = None
                    calls[names[fr]] += 1
                stack.append((fr, at))
            elif e["type"] == "C":
                if not stack:
                    fail("%s: close of %r at %r with no frame open" % (p["name"], names[fr], at))
                top, since = stack[-1]
                if top != fr:
                    fail("%s: close of %r at %r while %r is on top" % (p["name"], names[fr], at, names[top]))
                if closed_at != at:
                    snapshot = [f for f, _ in stack]
                    closed_at = at
                stack.pop()
                intervals[(vm, names[fr])].append((since, at))
                if not stack:
                    closed = snapshot
                    reopen_at = None
            else:
                fail("%s: event type %r" % (p["name"], e["type"]))
            last = at
        if stack:
            fail("%s: %d frames still open at the end" % (p["name"], len(stack)))
        if p["endValue"] < last:
            fail("%s: endValue before the last event" % p["name"])
    print("ok: speedscope: %d evented profiles, %d events, all nested and balanced" % (nprof, nev))

    r = json.load(open(report_path))
    calltree(d, names, r)
    if not nprof:
        print("ok: speedscope: no evented profiles (the calls are in the call-tree profiles)")
    want_calls = defaultdict(int)
    want_total = defaultdict(int)
    for f in r["functions"]:  # null: calls not recorded
        want_calls[f["name"]] += f["calls"] or 0
        want_total[f["name"]] += f["total_ns"] or 0
    total = defaultdict(float)
    count = defaultdict(int)
    for (vm, name), iv in intervals.items():
        total[name] += union_length(iv)
        count[name] += len(iv)
    checked = 0
    for name in (set(want_calls) | set(calls)) if nprof else ():
        if want_calls[name] != calls[name]:
            fail("%s: %d calls in the export, %d in the report" % (name, calls[name], want_calls[name]))
        # The export writes times in ns with 3 decimals, the report rounds
        # to the ns: a bound on rounding, not on timing.
        slack = 0.5 + 0.001 * 2 * count[name] + 1e-9 * want_total[name]
        if abs(total[name] - want_total[name]) > slack:
            fail("%s: total %.3f ns in the export, %d ns in the report" % (name, total[name], want_total[name]))
        if want_calls[name]:
            checked += 1
    print("ok: speedscope: calls and total time of %d functions equal the report's" % checked)

    if folded_path is None:
        return
    fself = defaultdict(int)
    ftotal = defaultdict(int)
    nfold = 0
    for line in open(folded_path):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, n = line.rsplit(" ", 1)
        n = int(n)
        nfold += n
        # Function names print with '_' for ' ', generated frames ("trace
        # 3") as they are: compare both sides with '_'.
        fr = [folded_name(x) for x in stack.split(";")]
        fself[fr[-1]] += n
        for x in set(fr):
            ftotal[x] += n
    sself = defaultdict(int)
    stotal = defaultdict(int)
    nsmp = 0
    for p in d["profiles"]:
        if (p["type"] != "sampled" or p["unit"] != "nanoseconds" or
                p["name"].startswith("call time")):
            continue
        if len(p["samples"]) != len(p["weights"]):
            fail("%s: %d samples, %d weights" % (p["name"], len(p["samples"]), len(p["weights"])))
        for w in p["weights"]:
            if not isinstance(w, (int, float)) or w < 0:
                fail("%s: weight %r" % (p["name"], w))
        for s in p["samples"]:
            nsmp += 1
            st = [folded_name(names[i]) for i in s]
            sself[st[-1]] += 1
            for x in set(st):
                stotal[x] += 1
    if nsmp != nfold:
        fail("%d samples in the export, %d in ljlog folded" % (nsmp, nfold))
    for name in set(fself) | set(sself):
        if fself[name] != sself[name] or ftotal[name] != stotal[name]:
            fail("%s: samples %d self %d total in the export, %d, %d in ljlog folded"
                 % (name, sself[name], stotal[name], fself[name], ftotal[name]))
    print("ok: speedscope: %d samples, per function (%d) as in ljlog folded" % (nsmp, len(fself)))
    # Time: each VM's sampled profile weighs the timer intervals its
    # samples stand for times the interval (the report's own counts).
    iv = r.get("interval_ns", 0)
    if iv:
        want = {"VM %d samples" % v["id"]: v["intervals"] * iv
                for v in r["vm_list"] if v["samples"]}
        got = {p["name"]: sum(p["weights"]) for p in d["profiles"]
               if p["type"] == "sampled" and p["unit"] == "nanoseconds" and
               not p["name"].startswith("call time")}
        for name in set(want) | set(got):
            if abs(want.get(name, 0) - got.get(name, 0)) > 1e-6 * want.get(name, 1):
                fail("%s: weights sum to %r ns, report: intervals x %d ns = %r"
                     % (name, got.get(name), iv, want.get(name)))
        print("ok: speedscope: the sampled profiles weigh %s ns: the report's "
              "intervals x %d ns" % (sorted(want.values()), iv))


def calltree(d, names, r):
    """The call-tree profiles against the report: self time and calls."""
    prof = {p["name"].split(" (")[0]: p for p in d["profiles"]
            if p["name"].startswith(("call time (", "calls ("))}
    want_calls = defaultdict(int)
    want_self = defaultdict(int)
    if not r["recorded"]["calls"]:
        if any(f["calls"] is not None for f in r["functions"]):
            fail("calls figures (not null) in a log without calls")
        if prof:
            fail("call-tree profiles in a log without calls")
        return
    for f in r["functions"]:
        want_calls[f["name"]] += f["calls"]
        want_self[f["name"]] += f["self_ns"]
    if not any(want_calls.values()):
        if prof:
            fail("call-tree profiles in a log without calls")
        return
    if set(prof) != {"call time", "calls"}:
        fail("call-tree profiles: %s" % sorted(prof))
    got = {}
    npath = defaultdict(int)  # paths per function, both profiles
    for k, p in prof.items():
        if p["type"] != "sampled" or len(p["samples"]) != len(p["weights"]):
            fail("%s: not a sampled profile with a weight per sample" % p["name"])
        w = defaultdict(float)
        for st, x in zip(p["samples"], p["weights"]):
            if not st or x <= 0:
                fail("%s: empty stack or weight %r" % (p["name"], x))
            w[names[st[-1]]] += x
            npath[names[st[-1]]] += 1
        got[k] = w
    for name in set(want_calls) | set(got["calls"]):
        if got["calls"][name] != want_calls[name]:
            fail("calls (by call path): %s: %r calls, %d in the report"
                 % (name, got["calls"][name], want_calls[name]))
        # Each path's ns rounds to the ns, as the report's sum does: a
        # bound on rounding, not on timing.
        if abs(got["call time"][name] - want_self[name]) > \
                0.5 * (npath[name] + 1) + 1e-9 * want_self[name]:
            fail("call time: %s: self %.3f ns, %d in the report"
                 % (name, got["call time"][name], want_self[name]))
    print("ok: speedscope: call-tree profiles: calls and self time of %d functions "
          "equal the report's" % sum(1 for v in want_calls.values() if v))


def chrome(path):
    d = json.load(open(path))
    evs = d["traceEvents"]
    named_p, named_t = set(), set()
    used_p, used_t = set(), set()
    stacks = defaultdict(list)
    last = {}
    kinds = defaultdict(int)
    for e in evs:
        ph = e["ph"]
        kinds[ph] += 1
        pid, tid = e["pid"], e["tid"]
        if ph == "M":
            if e["name"] == "process_name":
                named_p.add(pid)
            elif e["name"] == "thread_name":
                named_t.add((pid, tid))
            continue
        used_p.add(pid)
        used_t.add((pid, tid))
        ts = e["ts"]
        if not isinstance(ts, (int, float)):
            fail("ts %r is not a number" % ts)
        k = (pid, tid)
        if ph in "BE":
            if k in last and ts < last[k]:
                fail("track %r: %s at %r before %r" % (k, ph, ts, last[k]))
            last[k] = ts
        if ph == "B":
            stacks[k].append(e["name"])
        elif ph == "E":
            if not stacks[k]:
                fail("track %r: E %r at %r with no B open" % (k, e["name"], ts))
            top = stacks[k].pop()
            if top != e["name"]:
                fail("track %r: E %r at %r while %r is open" % (k, e["name"], ts, top))
        elif ph == "X":
            if not isinstance(e["dur"], (int, float)) or e["dur"] < 0:
                fail("X %r: duration %r" % (e["name"], e["dur"]))
        elif ph == "C":
            for v in e["args"].values():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    fail("counter %r: value %r is not a number" % (e["name"], v))
        elif ph != "i":
            fail("unexpected phase %r" % ph)
    for k, st in stacks.items():
        if st:
            fail("track %r: %d slices left open" % (k, len(st)))
    for p in used_p - named_p:
        fail("pid %r has no process_name" % p)
    for t in used_t - named_t:
        fail("pid/tid %r has no thread_name" % (t,))
    print("ok: chrome: %d events (%s), slices nest on %d tracks, every pid and tid named, counters numbers"
          % (len(evs), ", ".join("%s %d" % kv for kv in sorted(kinds.items())), len(stacks)))


def loaded(path, want):
    d = json.load(open(path))
    if d["problems"]:
        fail("speedscope reported: " + " | ".join(d["problems"][:5]))
    if not d["profiles"]:
        fail("speedscope shows no profile")
    syms = set()
    for p in d["profiles"]:
        syms.update(p["symbols"])
    for w in want:
        if w not in syms:
            fail("%r is not among speedscope's symbols: %s" % (w, sorted(syms)[:40]))
    print("ok: speedscope loaded %d profiles (%s) with no error; symbols include %s"
          % (len(d["profiles"]), "; ".join(p["name"] for p in d["profiles"]), ", ".join(want)))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "speedscope":
        speedscope(*sys.argv[2:5])
    elif len(sys.argv) == 3 and sys.argv[1] == "chrome":
        chrome(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "loaded":
        loaded(sys.argv[2], sys.argv[3:])
    else:
        fail("usage: see the docstring")
