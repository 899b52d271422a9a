#!/usr/bin/env python3
"""ljlog e2e (pprof.sh): what `go tool pprof` reads from `ljlog export
--format pprof` against `ljlog report --json` and `ljlog folded`.

usage: pprof_check.py PPROF_CMD PROFILE REPORT_JSON FOLDED FOLDED_CALLS LIVE

PPROF_CMD runs `go tool pprof ARGS`; FOLDED is `ljlog folded` (sampled
stacks), FOLDED_CALLS `ljlog folded --calls` (self ns by call path); either
may be '-' when the log has none. LIVE is the program's own count of live
heap bytes at the end, '-' when unknown. Checks the sample types the
profile has; exit 1 with the differences.
"""
import json
import re
import subprocess
import sys

pprof_cmd, prof, report, folded, folded_calls, live = sys.argv[1:7]
bad = []


def pprof(*args):
    r = subprocess.run([pprof_cmd, "-symbolize=none"] + list(args) + [prof],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit("go tool pprof %s failed (%d): %s"
                 % (" ".join(args), r.returncode,
                    r.stderr.decode(errors="replace")[:500]))
    return r.stdout.decode("utf-8", errors="replace")


def clean(name):
    """A name as `ljlog folded` prints it."""
    return re.sub(r"[; \n]", "_", name)


def top(index, unit=None):
    """-top at a sample index: {name: [flat, cum]}, summed by name."""
    args = ["-top", "-nodecount=10000000", "-nodefraction=0",
            "-edgefraction=0", "-sample_index=" + index]
    if unit:
        args.append("-unit=" + unit)
    out, rows, on = pprof(*args), {}, False
    for ln in out.splitlines():
        if re.match(r"^\s+flat\s+flat%\s+sum%\s+cum\s+cum%", ln):
            on = True
            continue
        if not on or not ln.strip():
            continue
        m = re.match(r"^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.*)$", ln)
        if not m:
            bad.append("-top %s: cannot read %r" % (index, ln))
            continue
        r = rows.setdefault(m.group(3), [0, 0])
        r[0] += num(m.group(1))
        r[1] += num(m.group(2))
    if not on:
        bad.append("-top %s: no table in %r" % (index, out[:300]))
    return rows


def num(s):
    m = re.match(r"^(-?[\d.e+]+)([A-Za-z]*)$", s)
    if not m:
        bad.append("not a figure: %r" % s)
        return 0
    return int(round(float(m.group(1))))


def folded_leaves(path):
    """{leaf frame: weight} and the set of every frame name."""
    leaves, frames = {}, set()
    for ln in open(path, encoding="utf-8", errors="replace"):
        stack, w = ln.rstrip("\n").rsplit(" ", 1)
        # Pseudo-frames ("trace 3") keep their spaces in folded.
        fr = [clean(f) for f in stack.split(";")]
        frames.update(fr)
        leaves[fr[-1]] = leaves.get(fr[-1], 0) + int(w)
    return leaves, frames


def folded_cum(path, names):
    """{name: weight of the stacks holding it at least once} for names."""
    cum = {}
    for ln in open(path, encoding="utf-8", errors="replace"):
        stack, w = ln.rstrip("\n").rsplit(" ", 1)
        for f in set(clean(f) for f in stack.split(";")) & names:
            cum[f] = cum.get(f, 0) + int(w)
    return cum


def same(what, want, got):
    """Two {name: figure} maps, zeros left out."""
    want = {k: v for k, v in want.items() if v}
    got = {k: v for k, v in got.items() if v}
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            bad.append("%s %s: expected %s, pprof has %s"
                       % (what, k, want.get(k), got.get(k)))
    return len(want)


# -- The raw profile: types, period, samples, locations --------------------------
raw = pprof("-raw")
types, period, samples, locs = [], 0, [], {}
lines = raw.splitlines()
for i, ln in enumerate(lines):
    if ln.startswith("Period: "):
        period = int(ln.split()[1])
    if ln == "Samples:":
        types = [t.split("/")[0] for t in
                 lines[i + 1].replace("[dflt]", "").split()]
    m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*) (\S*):(\d+) s=(\d+)$", ln)
    if m:
        locs[int(m.group(1))] = (m.group(2), int(m.group(4)))
for ln in lines:
    m = re.match(r"^\s+([-\d ]+): ([\d ]+)$", ln)
    if m and types:
        vals = [int(v) for v in m.group(1).split()]
        if len(vals) == len(types):
            samples.append((vals, [int(x) for x in m.group(2).split()]))
if not types or not samples:
    sys.exit("go tool pprof -raw: no sample types or no samples in %r"
             % raw[:300])
d = json.load(open(report))
fns = d["functions"]


def per_name(key):
    out = {}
    for f in fns:
        out[clean(f["name"])] = out.get(clean(f["name"]), 0) + (f[key] or 0)  # null: not recorded
    return out


def cleaned(rows, col):
    out = {}
    for k, v in rows.items():
        out[clean(k)] = out.get(clean(k), 0) + v[col]
    return out


msgs = []
# -- Samples ------------------------------------------------------------------
if "samples" in types:
    tkind = "wall" if "wall" in types else "cpu"
    t = top("samples")
    leaves, frames = folded_leaves(folded)
    n = same("samples flat (folded leaf)", leaves, cleaned(t, 0))
    # cum: once per sample wherever the name is in a folded stack (pprof
    # and folded show the same Lua-first stacks; pprof merges functions of
    # one name as the count by name does).
    want = folded_cum(folded, frames)
    got = cleaned(t, 1)
    same("samples cum (folded)", want, got)
    # A Lua function is in the Lua-first stacks wherever the report's
    # merged ones have it: its cum is the report's samples_total (for a
    # name only one function has).
    count = {}
    for f in fns:
        count[clean(f["name"])] = count.get(clean(f["name"]), 0) + 1
    same("samples cum of Lua functions (report samples_total)",
         {clean(f["name"]): f["samples_total"] for f in fns
          if f["kind"] == "lua" and count[clean(f["name"])] == 1},
         {k: v for k, v in got.items()
          if any(f["kind"] == "lua" and clean(f["name"]) == k
                 and count[k] == 1 for f in fns)})
    total = sum(v[0] for v in t.values())
    if total != d["samples"]:
        bad.append("samples: pprof total %d, report %d" % (total, d["samples"]))
    # Time: a sample stands for the timer intervals it counts (1 + those
    # the kernel merged into its signal), so a VM's samples weigh its
    # intervals per sample times the period; rounded per pprof sample.
    tt = top(tkind, "ns")
    if d.get("interval_ns") != period:
        bad.append("period: pprof %d, report interval_ns %s"
                   % (period, d.get("interval_ns")))
    sampled = [v for v in d["vm_list"] if v["samples"]]
    got_t, flat = cleaned(tt, 0), cleaned(t, 0)
    if len(sampled) == 1:
        r = sampled[0]["intervals"] / sampled[0]["samples"]
        for k in sorted(set(flat) | set(got_t)):
            want = flat.get(k, 0) * period * r
            if abs(got_t.get(k, 0) - want) > max(1, flat.get(k, 0)):
                bad.append("%s ns flat %s: expected %d (samples x period "
                           "%d x %.3f intervals per sample), pprof has %s"
                           % (tkind, k, want, period, r, got_t.get(k)))
    want_tot = sum(v["intervals"] for v in d["vm_list"]) * period
    if abs(sum(got_t.values()) - want_tot) > total:
        bad.append("%s ns total: pprof %d, report intervals x period %d"
                   % (tkind, sum(got_t.values()), want_tot))
    tags = pprof("-tags", "-sample_index=samples")
    lab, key = {}, None
    for ln in tags.splitlines():
        m = re.match(r"^ (\S+): Total", ln)
        if m:
            key = m.group(1)
            continue
        m = re.match(r"^\s+([\d.]+) \(\s*[\d.]+%\): (.*)$", ln)
        if m and key:
            lab.setdefault(key, {})[m.group(2)] = int(float(m.group(1)))
    same("state label", d["states"], lab.get("state", {}))
    vml, pidl = {}, {}
    pids = [l["pid"] for l in d["logs"]]
    for v in d["vm_list"]:
        if v["samples"]:
            vml[str(v["id"])] = vml.get(str(v["id"]), 0) + v["samples"]
            pid = str(pids[v.get("log", 0)])
            pidl[pid] = pidl.get(pid, 0) + v["samples"]
    same("vm label", vml, lab.get("vm", {}))
    same("pid label", pidl, lab.get("pid", {}))
    th = {}
    for v in d["vm_list"]:
        th[str(v["thread"])] = th.get(str(v["thread"]), 0) + v["samples"]
    same("thread label", th, lab.get("thread", {}))
    msgs.append("%d samples: %d leaf frames as folded, cum as report "
                "samples_total, %s = %d intervals x %d ns, labels "
                "state/vm/pid/thread as the report"
                % (total, n, tkind, want_tot // period, period))

# -- Allocations ----------------------------------------------------------------
if "alloc_objects" in types:
    ix = {t: types.index(t) for t in
          ("alloc_objects", "alloc_space", "inuse_objects", "inuse_space")}
    got = {}
    for vals, ids in samples:
        if not any(vals[i] for i in ix.values()):
            continue
        if len(ids) != 1:
            bad.append("alloc sample with %d locations" % len(ids))
            continue
        key = locs.get(ids[0])
        g = got.setdefault(key, [0, 0, 0, 0])
        for j, t in enumerate(ix):
            g[j] += vals[ix[t]]
    want = {}
    for s in d["alloc_sites"]:
        if s["alloc_count"] or s["alloc_bytes"]:
            want[(s["function"], s["line"])] = [
                s["alloc_count"], s["alloc_bytes"],
                max(0, s["alloc_count"] - s["free_count"]),
                max(0, s["alloc_bytes"] - s["free_bytes"])]
    for k in sorted(set(want) | set(got), key=str):
        if want.get(k) != got.get(k):
            bad.append("alloc site %s: report [count, bytes, live count, "
                       "live bytes] %s, pprof %s" % (k, want.get(k), got.get(k)))
    same("alloc_space per function (report alloc_bytes)",
         per_name("alloc_bytes"), cleaned(top("alloc_space", "B"), 0))
    same("alloc_objects per function (report alloc_count)",
         per_name("alloc_count"), cleaned(top("alloc_objects"), 0))
    inuse = sum(v[3] for v in got.values())
    if live != "-":
        before = sum(s["free_bytes"] for s in d["alloc_sites"]
                     if s["function"] == "(before attach)")
        want_inuse = int(live) - d["heap"]["attach"] + before
        if inuse != want_inuse:
            bad.append("inuse_space: pprof %d, the program's live heap %s - "
                       "attach %d + freed from before attach %d = %d"
                       % (inuse, live, d["heap"]["attach"], before, want_inuse))
    msgs.append("%d allocation sites: counts, bytes and inuse as the report; "
                "inuse_space %d%s" % (len(want), inuse,
                                      " = the program's live heap - attach + "
                                      "freed from before" if live != "-" else ""))

# -- Calls ------------------------------------------------------------------------
if "calls" in types:
    n = same("calls flat (report calls)", per_name("calls"),
             cleaned(top("calls"), 0))
    leaves, _ = folded_leaves(folded_calls)
    same("time ns flat (folded --calls leaf)", leaves,
         cleaned(top("time", "ns"), 0))
    msgs.append("calls of %d functions as the report, self time as folded "
                "--calls" % n)

if bad:
    print("\n".join(bad[:40]), file=sys.stderr)
    sys.exit(1)
for m in msgs:
    print(m)
