"""ljlog e2e: the allocation-line oracle (alloc_lines.sh).

alloc_lines.py EXACT.json SAMPLED.dump LABEL [CALLS_HELPER LUAJIT]

Every allocation that compiled code made in the sampled run (`ljlog dump
-v`: ALLOC of site kind trace, resolved to a function and a line) is on a
line where the exact run (`alloc`, every allocation, JIT on) allocated in
the same function, or on no line ("line ?"). With CALLS_HELPER, a line
that calls something (LuaJIT's bytecode says so) is also allowed: a
builtin compiled into a trace allocates on its caller's line there, while
the interpreter charges the builtin itself. Prints one "ok:" line, or the
sites that break the rule and exits 1. With ALLOC_LINES_NEED=1 in the
environment, a run without allocations in compiled code fails too.
"""
import collections
import json
import os
import re
import subprocess
import sys


def loc(f):
    """A function as both views name it: "path:linedefined" (a name can
    come late, "main chunk (path)" stays whole)."""
    m = re.search(r"\(([^()]*(\([^()]*\))?[^()]*)\)$", f)
    return m.group(1) if m and ":" in m.group(1) else f


exact = json.load(open(sys.argv[1]))
label = sys.argv[3]
E = {(loc(s["function"]), s["line"]) for s in exact["alloc_sites"] if s["kind"] == "lua"}
rx = re.compile(r" ALLOC site trace .* -> \((.*)\) \d+ inlined line (\d+) ")
got = collections.Counter()
for line in open(sys.argv[2]):
    m = rx.search(line)
    if m:
        got[(loc(m.group(1)), int(m.group(2)))] += 1
total = sum(got.values())
unknown = sum(n for k, n in got.items() if k[1] == 0)
bad = {k: n for k, n in got.items() if k[1] and k not in E}
excused = 0
if bad and len(sys.argv) > 5:
    files = sorted({re.sub(r"^main chunk \((.*)\)$|:\d+$", r"\1", k[0]) for k in bad})
    files = [f for f in files if os.path.isfile(f)]
    env = dict(os.environ)
    env.pop("LUAJIT_PROFILE", None)
    out = subprocess.run([sys.argv[5], sys.argv[4]] + files, env=env, check=True,
                         capture_output=True, text=True).stdout
    calls = {(k, int(l)) for k, l in (x.split("\t") for x in out.splitlines())}
    for k in [k for k in bad if k in calls]:
        excused += bad.pop(k)
if total == 0:
    # Programs whose allocations all happen outside compiled code (a
    # coroutine's body is recorded by no trace here): nothing to judge.
    if os.environ.get("ALLOC_LINES_NEED") == "1":
        print(f"FAIL: alloc_lines: {label}: no allocation in compiled code was recorded", file=sys.stderr)
        sys.exit(1)
    print(f"info: alloc_lines: {label}: no allocation in compiled code (nothing to judge)")
    sys.exit(0)
if bad:
    print(f"FAIL: alloc_lines: {label}: {sum(bad.values())} of {total} allocations in compiled "
          f"code on lines where the exact run allocated nothing:", file=sys.stderr)
    for (f, l), n in sorted(bad.items(), key=lambda x: -x[1])[:12]:
        near = sorted(x for g, x in E if g == f)
        print(f"  {f} line {l}: {n}; the exact run's lines there: {near[:12]}", file=sys.stderr)
    sys.exit(1)
print(f"ok: alloc_lines: {label}: {total} allocations in compiled code at {len(got)} sites, "
      f"each on a line the exact run allocated on ({excused} on lines that call a builtin), "
      f"{100.0 * unknown / total:.1f}% on no line known")
