#!/usr/bin/env bash
# ljlog e2e: frames of fast functions (doc/format.txt "Frames (calls)").
# frames.lua runs once under a debug.sethook caller -> callee counter
# (edgecount.lua, JIT off, unprofiled) and once under ljlog (calls); every
# edge between two Lua functions of frames.lua must have exactly the hook's
# count in `ljlog folded --calls --count`, none more: the calls that follow
# a leaf fast function (ipairs' iterator, next, assert, math.floor,
# tostring, ...) belong to its caller. A leaf's total time is its own: the
# iterator and assert take a small part of the work() calls that follow
# them (a quarter of work()'s total at most; under the version 3 rule the
# iterator would hold the 24 of work()'s 33 calls made in its loops, and
# with work(400000) a leaf's own time, even under ThreadSanitizer's slower
# hooks, is far below that). The FFUNC records mark exactly
# pcall, xpcall, coroutine.resume, coroutine.yield and coroutine.wrap's
# function CALLBACK. With the version 3 rule (leaves open until a call
# above them returns) the edges and the totals both fail.
. "$(dirname "$0")/lib.sh"

prog=$E2E/frames.lua
luajit_plain "$E2E/edgecount.lua" "$T/hook.txt" "$prog" >"$T/hook.out" 2>"$T/hook.err" ||
	{ show "$T/hook.err"; fail "the hook counter run failed"; }
rc=0
profile "file=$T/frames.ljlog,nodefaults,calls" "$prog" >"$T/prof.out" 2>"$T/prof.err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/prof.err"; fail "the profiled run exited with status $rc"; }
cmp -s "$T/hook.out" "$T/prof.out" ||
	fail "the output differs under ljlog: '$(head -c 200 "$T/hook.out")' vs '$(head -c 200 "$T/prof.out")'"
check_complete "$T/frames.ljlog"
ljlog folded --calls --count "$T/frames.ljlog" >"$T/folded.txt" 2>"$T/folded.err" ||
	{ show "$T/folded.err"; fail "ljlog folded --calls --count failed"; }
report_json "$T/frames.ljlog" "$T/frames.json"
ljlog dump "$T/frames.ljlog" >"$T/dump.txt" 2>&1 || fail "ljlog dump failed"

python3 - "$T/hook.txt" "$T/folded.txt" "$T/frames.json" "$T/dump.txt" "$test_name" <<'PY' ||
import json, os, re, sys
hook_path, folded_path, json_path, dump_path, test = sys.argv[1:]
ME = "frames.lua"

def lua_key(name):
    """'frames.lua:12' for a function of frames.lua (any directory), named
    ('work (frames.lua:6)', folded 'work_(frames.lua:6)') or not
    ('frames.lua:6'), else None (library functions, other chunks)."""
    m = re.search(r"\(([^()]*):(\d+)\)$", name) or re.match(r"^(.*):(\d+)$", name)
    c = re.match(r"^main[ _]chunk[ _]\((.*)\)$", name)  # line 0
    if c and os.path.basename(c.group(1)) == ME:
        return "%s:0" % ME
    if not m or os.path.basename(m.group(1)) != ME:
        return None
    return "%s:%s" % (ME, m.group(2))

want = {}
for ln in open(hook_path):
    n, caller, callee = ln.split()
    a, b = lua_key(caller), lua_key(callee)
    if a and b:
        want[(a, b)] = want.get((a, b), 0) + int(n)

got = {}
for ln in open(folded_path):
    path, n = ln.rstrip("\n").rsplit(" ", 1)
    fr = path.split(";")
    if len(fr) < 2:
        continue
    a, b = lua_key(fr[-2]), lua_key(fr[-1])
    if a and b:
        got[(a, b)] = got.get((a, b), 0) + int(n)

bad = []
for e in sorted(set(want) | set(got)):
    if want.get(e) != got.get(e):
        bad.append("edge %s -> %s: hook counted %s calls, ljlog %s"
                   % (e[0], e[1], want.get(e), got.get(e)))
if len(want) < 30:
    bad.append("only %d Lua edges in the hook's count" % len(want))

# Leaf fast functions' totals are their own time.
d = json.load(open(json_path))
fn = {f["name"]: f for f in d["functions"]}
work = fn.get("%s:6" % ME) or next((f for n, f in fn.items() if lua_key(n) == ME + ":6"), None)
if not work:
    bad.append("no work() (%s:6) in the report" % ME)
else:
    # (Leaves that allocate, like tostring, may run a GC step: not these.)
    for leaf in ("ipairs (iterator)", "assert", "math.sqrt", "next"):
        f = fn.get(leaf)
        if not f:
            bad.append("no %s in the report" % leaf)
        elif f["kind"] != "fast" or f["total_ns"] * 4 > work["total_ns"]:
            bad.append("%s: kind %s, total %d ns, work() total %d ns: a leaf's "
                       "total must be far below the calls after it"
                       % (leaf, f["kind"], f["total_ns"], work["total_ns"]))

# FFUNC flags: CALLBACK on exactly these.
cb_want = {"pcall", "xpcall", "coroutine.resume", "coroutine.yield",
           "coroutine.wrap (function)"}
cb_got, leaf_got = set(), set()
for ln in open(dump_path):
    m = re.search(r'FFUNC \d+ ffid \d+ name "(.*)" flags 0x([0-9a-f]+)', ln)
    if m:
        fl = int(m.group(2), 16)
        if fl & 2:
            cb_got.add(m.group(1))
        elif fl & 1:
            leaf_got.add(m.group(1))
if cb_got != cb_want:
    bad.append("CALLBACK FFUNCs %s, expected %s" % (sorted(cb_got), sorted(cb_want)))
for leaf in ("ipairs (iterator)", "assert", "next", "rawget", "tostring",
             "math.floor", "type", "string.sub", "pairs", "ipairs"):
    if leaf not in leaf_got:
        bad.append("%s: not a NOEXIT FFUNC without CALLBACK (leaves: %s)"
                   % (leaf, sorted(leaf_got)))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: %s: %d Lua caller -> callee edges, exact counts (%d calls)"
      % (test, len(want), sum(want.values())))
print("ok: %s: leaf totals below a 20th of work()'s %d ns: %s" % (
    test, work["total_ns"], ", ".join("%s=%dns" % (l, fn[l]["total_ns"])
                                      for l in ("ipairs (iterator)", "assert", "math.sqrt"))))
print("ok: %s: CALLBACK on %s" % (test, ", ".join(sorted(cb_got))))
PY
	{ show "$T/folded.txt"; fail "frames differ from the hook's (see above)"; }
