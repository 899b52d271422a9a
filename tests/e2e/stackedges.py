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
# and what LuaJIT was doing ("(gc)", "(luajit)") are left out. A Lua
# function is its place, chunk:line: its name is the first one ljlog
# found, which two runs may find apart (a closure stored in two tables).
# Prints a line of counts; exits 1 naming the edges and roots not in EXACT.
import collections
import re
import sys

NAMED = re.compile(r"_\(([^()]*:-?\d+)\)$")  # "fib_(app.lua:4)"
MAIN = re.compile(r"^main_chunk_\((.*)\)$")  # "main_chunk_(app.lua)"
PLACE = re.compile(r":-?\d+$")  # "app.lua:4", '[string_"x"]:1'


def frame(f):
    """Frame f of a folded stack as compared: a Lua function's place, a
    builtin's or C function's name, or None (a host frame, a state)."""
    if not f or "+0x" in f or f.startswith("(") or (
            f.startswith("[") and not f.startswith("[string")):
        return None
    m = NAMED.search(f)
    if m:
        return m.group(1)
    m = MAIN.match(f)
    if m:
        return m.group(1) + ":0"
    return f


def is_lua(f):
    return bool(PLACE.search(f))


def frames(line):
    path, _, n = line.rstrip("\n").rpartition(" ")
    fs = [f for f in map(frame, path.split(";")) if f]
    return fs, int(n)


edges, roots = set(), set()
for line in open(sys.argv[1]):
    fs, _ = frames(line)
    if fs:
        roots.add(fs[0])
    edges.update(zip(fs, fs[1:]))
callers_of_c = {a for a, b in edges if not is_lua(b) and "." not in b}
c_names = {f for e in edges for f in e if not is_lua(f)}
calls_c = {a for a, b in edges if not is_lua(b)}
called_by_c = {b for a, b in edges if not is_lua(a)}


def known(e):
    """The name of the known gap e is, or None."""
    a, b = e
    if any((a, p) in edges and (p, b) in edges for p in ("pcall", "xpcall")):
        return "compiled pcall"
    if b == "ffi_call" and a in callers_of_c:
        return "FFI call"
    # A C function has the name ljlog found first, which two runs may find
    # apart ("lfs.attributes", or "attrib", an upvalue holding it): an
    # edge to or from a C function the exact run named otherwise, where
    # the Lua function calls (or is called by) C functions there.
    if (not is_lua(b) and b not in c_names and a in calls_c) or (
            not is_lua(a) and a not in c_names and b in called_by_c):
        return "C function named otherwise"
    # The collector runs a finalizer wherever it steps, and lua_close
    # runs the last ones with no Lua frame below.
    if b.endswith("__gc"):
        return "finalizer"
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
        if fs[0].endswith("__gc"):
            allowed["finalizer"] += n
        else:
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
