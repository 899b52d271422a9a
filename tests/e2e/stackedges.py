#!/usr/bin/env python3
# ljlog e2e: every sampled stack is a path of the exact call graph
# (stackedges.sh). Usage: stackedges.py EXACT SAMPLED [KNOWN]
#   EXACT    `ljlog folded --calls --count` of the program with calls (JIT
#            off): its paths give the edges caller -> callee and the roots
#            (first frames)
#   SAMPLED  `ljlog folded --lua --no-traces` of it with samples (JIT on)
#   KNOWN    edges "a -> b" allowed though not in EXACT (one per line; the
#            gaps stackedges.sh names), or nothing
# Lua and builtin frames only: host frames ("luajit+0x92c0", "[libc.so.6]")
# and what LuaJIT was doing ("(gc)", "(luajit)") are left out. Prints a
# line of counts; exits 1 naming the edges and roots not in EXACT.
import collections
import sys


def frames(line):
    path, _, n = line.rstrip("\n").rpartition(" ")
    fs = [f for f in path.split(";")
          if f and not f.startswith(("(", "[")) and "+0x" not in f]
    return fs, int(n)


edges, roots = set(), set()
for line in open(sys.argv[1]):
    fs, _ = frames(line)
    if fs:
        roots.add(fs[0])
    edges.update(zip(fs, fs[1:]))
callers_of_c = {a for a, b in edges if "(" not in b and "." not in b}


def known(e):
    """The name of the known gap e is, or None."""
    a, b = e
    if any((a, p) in edges and (p, b) in edges for p in ("pcall", "xpcall")):
        return "compiled pcall"
    if b == "ffi_call" and a in callers_of_c:
        return "FFI call"
    return None


bad, badroot, allowed = (collections.Counter() for _ in range(3))
samples = checked = 0
for line in open(sys.argv[2]):
    fs, n = frames(line)
    # ljlog's own loading (luajit -lljlog: require, then luaopen_ljlog,
    # where sampling starts) is before the exact run's hook records:
    # under qemu-user it is slow enough to be sampled, in luaopen_ljlog
    # or in require once it returned (a program's own require has its
    # main chunk below it).
    if not fs or "luaopen_ljlog" in fs or fs == ["require"]:
        continue
    samples += n
    if fs[0] not in roots:
        badroot[fs[0]] += n
    for e in zip(fs, fs[1:]):
        checked += n
        if e in edges:
            continue
        gap = known(e)
        if gap:
            allowed[gap] += n
        else:
            bad[e] += n
if bad or badroot:
    for e, n in bad.most_common(10):
        print("not in the exact graph: %s -> %s (%d samples)" % (e[0], e[1], n),
              file=sys.stderr)
    for r, n in badroot.most_common(10):
        print("not a root of the exact graph: %s (%d samples)" % (r, n),
              file=sys.stderr)
    sys.exit(1)
print("%d samples with Lua frames, %d edges in them, all in the exact graph%s"
      % (samples, checked, "" if not allowed else
         " but known gaps: %s" % ", ".join(
             "%s %d" % (g, n) for g, n in sorted(allowed.items()))))
