#!/usr/bin/env python3
"""ljlog against LuaJIT's own profiler on a corpus of programs.

Each program runs under jit.profile (mode f, 1 ms: sample_jitprofile.lua
counts the samples per innermost Lua function) and under ljlog
(sample=1ms), with the JIT on and off. For every Lua function with at
least MIN_SHARE of either profiler's samples (of those charged to a Lua
function), the two shares must agree within TOLERANCE points.

Both are samples, and two runs of one program differ beyond sampling:
with the JIT on they may compile other traces, or run the same ones at
other speeds (code placement). So each side runs twice a round (each run
about half of --cpu seconds of CPU), and a difference is judged against
the larger of its sampling error and the runs' spread: beyond TOLERANCE
by more than 3 standard errors fails at once; within chance of it, two
more runs each, up to MAX_ROUNDS rounds, after which it fails beyond 2
standard errors (and passes within them: the runs vary too much to tell;
the table shows the error). Every function's difference within TOLERANCE
passes (with MIN_N samples on each side at least).

Where a C function calls Lua back (string.gsub with a function, table.sort
with a comparator) or an error unwinds to a pcall, the two charge the C
time by different rules: jit.profile to the next Lua function to run an
instruction (the callback, the pcall's caller), ljlog to the innermost
Lua function on the stack (the C function's caller, the function that
raised). Such a program names the two functions as one group (--group):
their summed shares are compared, and every other function alone.

Usage: jitp_harness.py --luajit L --ljlog CLI --moddir DIR --jitprofile F
       --tmp DIR [--preload LIB] [--modes on,off] [--cpu SECONDS]
       [--group NAME=LINE+LINE]... [--truth NAME]... [--unjudged NAME:MODE]...
       [--table FILE] PROGRAM...
PROGRAM is NAME=SCRIPT[:ARG...] ; ARG 'SCALE' is replaced by the work
scale (a number, 0.54 as well as 3: the corpus's programs scale their
rounds), and a program without SCALE is run a whole number of times per
round (its samples added). The first round's scale gives about --cpu
seconds of CPU (default 2.6: about 650 samples of jit.profile's, whose
timer the kernel fires at its tick, 4 ms), from an unprofiled run.
A program and mode named by --unjudged NAME:MODE is measured and shown,
not judged: recursion with the JIT on, whose traces jit.profile's own
exits change (in one run of three its side traces made the program a
third faster, and mix's share 40% instead of 14%).
A program named by --truth NAME is compared with its own timing of its
functions apart (SCRIPT SCALE on|off ratio prints "share LINE PERCENT")
instead of jit.profile: where jit.profile's rule is wrong (nbody's loops
without a check, see its header).
Exit: 0 agree, 1 a disagreement, 2 a run failed.
"""
import argparse
import math
import re
import resource
import os
import subprocess
import sys

TOLERANCE = 5.0  # points
MIN_SHARE = 5.0  # percent of either's samples
MIN_N = 500  # samples on each side before a comparison is decided
MAX_ROUNDS = 4
# A run not ended after HANG_FLOOR seconds plus HANG_FACTOR times its
# unprofiled CPU time is hung, and killed. jit.profile itself hangs now and
# then with the JIT on (luacheck: 3 runs in about 4,000 on Debian 12's
# LuaJIT, spinning in compiled code): its runs get ANCHOR_TRIES tries, each
# hang said; ljlog's get one.
HANG_FLOOR = 60.0
HANG_FACTOR = 30.0
ANCHOR_TRIES = 3
# A Lua function's frame in `ljlog folded`: "name_(chunk:line)" or
# "chunk:line".
# A Lua frame of `folded`: "name_(chunk:LINE)", "chunk:LINE", or a main
# chunk, "main_chunk_(chunk)", which jit.profile keys chunk:0.
LUA_FRAME = re.compile(r"_\(([^()]+:\d+)\)$|^([^()]+:\d+)$|^main_chunk_\(([^()]+)\)$")


def parse_program(spec):
    name, _, rest = spec.partition("=")
    parts = rest.split(":")
    return {"name": name, "script": parts[0], "args": parts[1:]}


class Runner:
    def __init__(self, o):
        self.o = o
        self.cpu1 = {}  # (name, mode): CPU seconds of one run at scale 1
        self.env = dict(os.environ)
        self.env.pop("LUAJIT_PROFILE", None)
        self.env["LUA_CPATH"] = os.path.join(o.moddir, "?.so") + ";;"

    def argv(self, prog, scale):
        """The program's arguments at a scale, and how many runs make it."""
        if "SCALE" in prog["args"]:
            return [a.replace("SCALE", "%g" % scale) for a in prog["args"]], 1
        return list(prog["args"]), scale

    def scale_for(self, prog, mode, cpu):
        """The scale at which one run takes about cpu seconds of CPU: two
        significant digits where the program scales its own work (the
        corpus's take a fraction), else a whole number of runs."""
        s = cpu / self.cpu_of(prog, mode)
        if "SCALE" in prog["args"]:
            return max(0.05, float("%.2g" % s))
        return max(1, round(s))

    def cpu_of(self, prog, mode):
        """CPU seconds of one unprofiled run at scale 1."""
        args, reps = self.argv(prog, 1)
        cmd = [self.o.luajit] + (["-joff"] if mode == "off" else []) + [
            prog["script"]] + args
        env = dict(self.env)
        env.pop("LD_PRELOAD", None)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.run(cmd, env, "%s [jit %s] unprofiled" % (prog["name"], mode))
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = max(0.001, (r1.ru_utime + r1.ru_stime) -
                  (r0.ru_utime + r0.ru_stime))
        self.cpu1[(prog["name"], mode)] = cpu
        return cpu

    def limit(self, prog, mode, scale):
        """Seconds after which one run at scale is hung."""
        cpu = self.cpu1.get((prog["name"], mode), 10.0)
        if "SCALE" in prog["args"]:
            cpu *= scale
        return HANG_FLOOR + HANG_FACTOR * cpu

    def run(self, cmd, env, what, limit=600.0, tries=1):
        for t in range(1, tries + 1):
            try:
                r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, timeout=limit)
                break
            except subprocess.TimeoutExpired:
                if t == tries:
                    raise RuntimeError("%s: not ended after %.0f s, %d "
                                       "tries" % (what, limit, tries))
                print("info: %s: not ended after %.0f s (try %d of %d, "
                      "killed): run again" % (what, limit, t, tries),
                      flush=True)
        # luacheck exits 1 when it finds warnings: only a crash fails.
        if r.returncode < 0 or r.returncode > 1:
            raise RuntimeError("%s: exit %d: %s" % (
                what, r.returncode, r.stderr.decode(errors="replace")[-2000:]))

    def jitp(self, prog, mode, scale, tag):
        """jit.profile's counts per chunk:linedefined (Lua functions)."""
        args, reps = self.argv(prog, scale)
        counts = {}
        out = os.path.join(self.o.tmp, "%s.%s.%s.jp" % (prog["name"], mode, tag))
        for _ in range(reps):
            cmd = [self.o.luajit] + (["-joff"] if mode == "off" else []) + [
                self.o.jitprofile, out, "fi1", prog["script"]] + args
            env = dict(self.env)
            env.pop("LD_PRELOAD", None)
            self.run(cmd, env, "%s [jit %s] under jit.profile" % (
                prog["name"], mode), self.limit(prog, mode, scale),
                     ANCHOR_TRIES)
            for ln in open(out):
                n, k = ln.rstrip("\n").split("\t", 1)
                if k not in ("C", "J", "?"):
                    counts[k] = counts.get(k, 0) + int(n)
        return counts

    def ljlog(self, prog, mode, scale, tag):
        """ljlog's samples per innermost Lua function (chunk:line): a C
        or fast function counts for its Lua caller, as jit.profile, which
        samples at bytecodes, charges it."""
        args, reps = self.argv(prog, scale)
        counts = {}
        log = os.path.join(self.o.tmp, "%s.%s.%s.ljlog" % (prog["name"], mode, tag))
        for _ in range(reps):
            env = dict(self.env)
            env["LUAJIT_PROFILE"] = "log:file=%s,sample=1ms" % log
            if self.o.preload:
                env["LD_PRELOAD"] = self.o.preload
            cmd = [self.o.luajit] + (["-joff"] if mode == "off" else []) + [
                "-lljlog", prog["script"]] + args
            self.run(cmd, env, "%s [jit %s] under ljlog" % (
                prog["name"], mode), self.limit(prog, mode, scale))
            r = subprocess.run([self.o.ljlog, "folded", "--lua",
                                "--no-traces", log],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if r.returncode != 0:
                raise RuntimeError("%s: ljlog folded: %s" % (
                    prog["name"], r.stderr.decode(errors="replace")))
            for ln in r.stdout.decode(errors="replace").splitlines():
                stack, _, n = ln.rpartition(" ")
                for frame in reversed(stack.split(";")):
                    m = LUA_FRAME.search(frame)
                    if m:
                        k = m.group(1) or m.group(2) or m.group(3) + ":0"
                        counts[k] = counts.get(k, 0) + int(n)
                        break
        return counts


def grouped(counts, groups):
    """counts with each group's functions (chunk:LINE for every LINE of
    it) as one entry, chunk:LINE+LINE."""
    out = dict(counts)
    for lines in groups:
        keys = [k for k in out if k.rsplit(":", 1)[-1] in lines]
        if not keys:
            continue
        chunk = keys[0].rsplit(":", 1)[0]
        out["%s:%s" % (chunk, "+".join(lines))] = sum(out.pop(k) for k in keys)
    return out


def shares(counts):
    """Percent per function of one run's counts."""
    n = sum(counts.values())
    return {k: 100.0 * v / n for k, v in counts.items()} if n else {}


def compare(jps, ljs):
    """Rows (function, jit.p %, ljlog %, diff, se) of the functions with
    MIN_SHARE of either, from each side's runs (lists of counts): pooled
    shares, and the standard error of their difference, the larger of
    what sampling alone gives and what the runs' spread gives (two runs of
    one program can compile other traces, or run them at other speeds);
    the samples of each side."""
    pool = lambda runs: {k: sum(r.get(k, 0) for r in runs)
                         for k in set().union(*runs)} if runs else {}
    jp, lj = pool(jps), pool(ljs)
    njp, nlj = sum(jp.values()), sum(lj.values())
    rows = []
    for k in sorted(set(jp) | set(lj)):
        a = 100.0 * jp.get(k, 0) / njp if njp else 0.0
        b = 100.0 * lj.get(k, 0) / nlj if nlj else 0.0
        if max(a, b) < MIN_SHARE:
            continue
        p = (jp.get(k, 0) + lj.get(k, 0)) / max(1, njp + nlj)
        se = 100.0 * math.sqrt(max(p * (1 - p), 1e-4) *
                               (1.0 / max(njp, 1) + 1.0 / max(nlj, 1)))
        spread = 0.0
        for runs in (jps, ljs):
            v = [shares(r).get(k, 0.0) for r in runs]
            if len(v) > 1:
                m = sum(v) / len(v)
                spread += sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v)
        rows.append((k, a, b, b - a, max(se, math.sqrt(spread))))
    return rows, njp, nlj


def verdict(rows, njp, nlj, last):
    """'pass', 'fail' or 'more' (measure again): a difference beyond
    TOLERANCE by more than 3 standard errors fails; one within chance of
    it is measured again; on the last round, one beyond it by more than 2
    standard errors fails, and the rest pass ("within chance": the runs
    vary too much to tell, as the table's se says)."""
    if min(njp, nlj) < MIN_N and not last:
        return "more"
    worst = "pass"
    for _, _, _, d, se in rows:
        if abs(d) <= TOLERANCE:
            continue
        if abs(d) > TOLERANCE + (2 if last else 3) * se:
            return "fail"
        if not last:
            worst = "more"
    return worst


def truth_of(runner, prog, mode, scale):
    """The program's own timing of its functions apart ("share LINE PCT"
    lines of SCRIPT SCALE on|off ratio), keyed chunk:line."""
    args, _ = runner.argv(prog, scale)
    cmd = [runner.o.luajit, prog["script"]] + args[:1] + [
        "off" if mode == "off" else "on", "ratio"]
    r = subprocess.run(cmd, env=runner.env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if r.returncode != 0:
        raise RuntimeError("%s [jit %s] ratio: %s" % (
            prog["name"], mode, r.stderr.decode(errors="replace")))
    chunk = prog["script"]
    if chunk.startswith("./"):
        chunk = chunk[2:]
    out = {}
    for ln in r.stdout.decode().splitlines():
        f = ln.split()
        if len(f) == 3 and f[0] == "share":
            out["%s:%s" % (chunk, f[1])] = int(round(float(f[2]) * 100))
    if not out:
        raise RuntimeError("%s [jit %s] ratio: no share lines" % (prog["name"], mode))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--luajit", required=True)
    ap.add_argument("--ljlog", required=True)
    ap.add_argument("--moddir", required=True)
    ap.add_argument("--jitprofile", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--preload", default="")
    ap.add_argument("--modes", default="on,off")
    ap.add_argument("--cpu", type=float, default=2.6)
    ap.add_argument("--group", action="append", default=[])
    ap.add_argument("--truth", action="append", default=[])
    ap.add_argument("--unjudged", action="append", default=[])
    ap.add_argument("--table", default="")
    ap.add_argument("programs", nargs="+")
    o = ap.parse_args()
    runner = Runner(o)
    table = []
    failed = []
    groups = {}
    for g in o.group:
        name, _, lines = g.partition("=")
        groups.setdefault(name, []).append(lines.split("+"))
    for spec in o.programs:
        prog = parse_program(spec)
        pg = groups.get(prog["name"], [])
        for mode in o.modes.split(","):
            jps, ljs = [], []
            try:
                # Two runs a round, each about half of --cpu.
                scale = runner.scale_for(prog, mode, o.cpu / 2)
                truth = (prog["name"] in o.truth and
                         truth_of(runner, prog, mode, scale))
                for rnd in range(MAX_ROUNDS):
                    for half in range(2):
                        tag = "%d.%d" % (rnd, half)
                        jps.append(grouped(truth if truth else
                                           runner.jitp(prog, mode, scale, tag), pg))
                        ljs.append(grouped(runner.ljlog(prog, mode, scale, tag), pg))
                    rows, njp, nlj = compare(jps, ljs)
                    v = verdict(rows, njp, nlj, rnd == MAX_ROUNDS - 1)
                    if v != "more":
                        break
            except RuntimeError as e:
                print("FAIL: %s" % e, file=sys.stderr)
                return 2
            anchor = "truth" if truth else "jit.p"
            for k, a, b, d, se in rows:
                table.append((prog["name"], mode, k, a, b, d, se, njp, nlj, anchor))
            if "%s:%s" % (prog["name"], mode) in o.unjudged:
                v = "shown, not judged"
            elif v == "fail":
                failed.append("%s [jit %s]" % (prog["name"], mode))
            print("%s: %s [jit %s]: %d functions of >= %.0f%%, %s %s, ljlog "
                  "%d samples, %d runs each: %s" % (
                      "FAIL" if v == "fail" else "ok", prog["name"], mode,
                      len(rows), MIN_SHARE, anchor,
                      "timed apart" if truth else "%d samples" % njp, nlj,
                      len(ljs), v), flush=True)
    lines = ["%-16s %-4s %-44s %7s %7s %6s %5s %6s %6s" % (
        "program", "jit", "function (chunk:line)", "anchor%", "ljlog%", "diff",
        "se", "n.anc", "n.lj")]
    for name, mode, k, a, b, d, se, njp, nlj, anchor in table:
        lines.append("%-16s %-4s %-44s %7.1f %7.1f %+6.1f %5.1f %6s %6d%s" % (
            name, mode, k[-44:], a, b, d, se,
            njp if anchor == "jit.p" else "timed", nlj,
            "" if abs(d) <= TOLERANCE else
            "  <-- not judged" if "%s:%s" % (name, mode) in o.unjudged else
            "  <-- off"))
    text = "\n".join(lines) + "\n"
    if o.table:
        with open(o.table, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    if failed:
        print("FAIL: shares differ from the anchor's by more than %.0f points: %s"
              % (TOLERANCE, ", ".join(failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
