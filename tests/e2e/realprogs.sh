#!/usr/bin/env bash
# ljlog e2e: real programs from Debian's archive, unmodified, under ljlog.
# luacheck (lua-check) and LDoc (lua-ldoc) run over Penlight's sources
# (lua-penlight), as `luajit SCRIPT ARGS` with their Lua entry points
# (/usr/bin/luacheck and /usr/bin/ldoc are Lua scripts; luajit skips their
# #! line). scripts/setup.sh installs the three packages; without them the
# test is skipped (77).
#
# Each program runs unprofiled (the reference), three times under a debug.sethook
# call counter (realprogs_hook.lua, JIT off, plain luajit) and under three
# profiles: `calls,alloc,gc` (the JIT off: `calls` turns it off),
# `sample=250us,wall` (2ms under qemu-user, where luacheck runs alone)
# with the JIT on, and the same with -joff. For every profiled run:
#  - the same exit status (luacheck exits 1: it finds warnings), the same
#    stdout, the same stderr (but ljlog's own "ljlog: " lines) and, for
#    LDoc, the same generated HTML tree as unprofiled;
#  - a complete log (`ljlog check` exit 0).
# calls,alloc,gc:
#  - every Lua function (chunk + first line) whose hook count is the same
#    in all three hook runs has exactly that many calls in `ljlog report --json`
#    (entries of one chunk:line summed: closures made on one line), but
#    table.sort's comparators and the functions they call (their counts
#    depend on the input's order, which may depend on addresses);
#  - every library function (C, fast, or LuaJIT's written in Lua such as
#    table.remove) the hook names by package.loaded ("module.field", or the
#    global's name), counted alike by the three hook runs and found by one of its
#    names in the report, has exactly the hook's count (at least 10 found;
#    those not found are named in an "info:" line);
#  - no return without its call (unmatched_exits 0), no reader warning,
#    one coroutine per coroutine.create/wrap the hook counted, plus the
#    main one;
#  - the heap balances: heap.attach + alloc_bytes - free_bytes = heap.live
#    = the VM's heap_live = heap_detach (LuaJIT's own count, read at
#    detach), with megabytes allocated and freed.
# sample runs:
#  - every sampled stack is a path of the exact call graph of the calls
#    run, from the thread's root (stackedges.py; Lua functions by their
#    chunk:line; known gaps counted and named; shown, not judged, under
#    qemu-user and on OpenResty's LuaJIT, where trace frames still lose
#    inlined frames, see check_stack_edges);
#  - samples taken (at least 100), none dropped unaccounted for: samples +
#    dropped = signals (their share is shown, not judged: drops happen
#    when the machine is busy);
#  - stacks reach the program: the entry chunk's samples_total is at least
#    90% of the samples taken in the states interp, c and trace;
#  - the top functions are the program's: the 3 Lua functions with the
#    most self samples are Lua functions of the program (its entry script,
#    its Lua modules, code it load()ed), the first with at least 2% of the
#    samples in states interp, c and trace (with the JIT on, LuaJIT's
#    compiler takes most of the others; C library functions such as
#    string.find may have more than any Lua function).
# Under ThreadSanitizer the JIT-on sample run is left out (too slow) and the
# sample runs are not checked for accuracy; each program still runs under
# calls,alloc,gc (all of its checks: the hook counter runs in plain luajit)
# and sample -joff (output and completeness).
#
# Two more checks, on by default (0 turns one into informational "info:"
# lines):
#   REALPROGS_STRICT_NAMES  no function in any of the reports named
#       `ffid:N`, a bare `0x...` address, or with line 18446744073709551615
#       (LuaJIT's built-in Lua functions such as table.remove, linedefined -1),
#       and every library function the hook counted is in the report by name
#   REALPROGS_STRICT_EDGES  exact caller -> callee call counts between Lua
#       functions, from `ljlog folded --calls --count` (one line per call
#       path, COUNT = calls of its leaf along it), against the hook's (the
#       caller is the frame below the callee when the call hook fires:
#       after a tail call, the tail caller's caller), for every edge the three
#       hook runs count alike
#
# Checked to fail: a hook counter that counts luacheck's parser.lua:339
# twice (Lua call counts); a report with one more string.find call (library
# counts), 16 more bytes freed (heap), 3 samples dropped beyond the
# signals (samples), the entry script alone as the program's files (top
# functions); an edge count changed in `folded --calls --count` output
# (edges); the reports of main before names landed (names).
. "$(dirname "$0")/lib.sh"

tsan=
case $LJLOG_TEST_PRELOAD in *tsan*) tsan=1 ;; esac
strict_names=${REALPROGS_STRICT_NAMES:-1}
strict_edges=${REALPROGS_STRICT_EDGES:-1}
HOOK=$E2E/realprogs_hook.lua

# Where the packages put things, a private HOME (lib.sh).
realprogs_find

# Inputs sized for the time budget (the JIT-on runs are the slow ones:
# every trace's machine code is mprotect()ed). luacheck: 6 of Penlight's
# modules; LDoc: a copy of 20 of them (it takes one directory).
realprogs_inputs
lc_in=$lc_files

# The programs: NAME, the script, its arguments (LDoc writes its HTML into
# $T/doc, emptied before each run and kept as $T/doc.LABEL), the Lua files
# that are the program's own (a path prefix per line).
lc_args="--no-config --no-color -j1$lc_in"
ldoc_args="--testing -d $T/doc $T/src/pl"
lc_own="$lc_bin
$(dirname "$lc_main")/
$(dirname "$(modpath argparse)")/argparse.lua"
ldoc_own="$ldoc_bin
$(dirname "$ldoc_mod")/
$pl_dir/"

# run PROG LABEL CMD...: run CMD for PROG (LDoc's doc dir emptied first and
# kept after); leaves $T/PROG.LABEL.{out,err,rc} (and doc.PROG.LABEL).
run() {
	local prog=$1 label=$2 rc=0
	shift 2
	rm -rf "$T/doc"
	"$@" >"$T/$prog.$label.out" 2>"$T/$prog.$label.err" || rc=$?
	echo "$rc" >"$T/$prog.$label.rc"
	[ -d "$T/doc" ] && mv "$T/doc" "$T/doc.$prog.$label"
	return 0
}

# same_as_plain PROG LABEL: exit status, stdout, stderr (without ljlog's
# own lines) and the doc tree as the unprofiled run's.
same_as_plain() {
	local prog=$1 label=$2 want got
	want=$(cat "$T/$prog.plain.rc")
	got=$(cat "$T/$prog.$label.rc")
	if [ "$got" != "$want" ]; then
		show "$T/$prog.$label.err"
		fail "$prog [$label]: exit status $got$([ "$got" -gt 128 ] && echo " (signal $((got - 128)))"), unprofiled $want"
	fi
	cmp -s "$T/$prog.plain.out" "$T/$prog.$label.out" || {
		diff "$T/$prog.plain.out" "$T/$prog.$label.out" | head -n 20 >&2
		fail "$prog [$label]: stdout differs from the unprofiled run's (diff above)"
	}
	grep -v '^ljlog: ' "$T/$prog.$label.err" >"$T/$prog.$label.err2" || true
	cmp -s "$T/$prog.plain.err" "$T/$prog.$label.err2" || {
		diff "$T/$prog.plain.err" "$T/$prog.$label.err2" | head -n 20 >&2
		fail "$prog [$label]: stderr differs from the unprofiled run's (diff above)"
	}
	if [ -d "$T/doc.$prog.plain" ]; then
		diff -r "$T/doc.$prog.plain" "$T/doc.$prog.$label" >"$T/docdiff" 2>&1 || {
			show "$T/docdiff"
			fail "$prog [$label]: the generated documentation differs from the unprofiled run's"
		}
	fi
}

# The call counts, the heap, the names and the edges (python below).
check_calls() {
	local prog=$1
	ljlog folded --calls --count "$T/$prog.calls.ljlog" >"$T/$prog.edges" 2>"$T/$prog.edges.err" ||
		echo "unavailable: $(head -n 1 "$T/$prog.edges.err")" >"$T/$prog.edges"
	python3 - "$prog" "$T/$prog.hook1" "$T/$prog.hook2" "$T/$prog.hook3" "$T/$prog.calls.json" \
		"$T/$prog.edges" "$strict_names" "$strict_edges" "$test_name" <<'PY' || fail "$prog [calls,alloc,gc]: checks failed (see above)"
import collections, json, re, sys, urllib.parse
prog, h1, h2, h3, jpath, epath, strict_names, strict_edges, test = sys.argv[1:]
strict_names, strict_edges = strict_names == "1", strict_edges == "1"
d = json.load(open(jpath))
bad = []

def key(src, line):
    """A Lua function as the reader names its chunk: '@'/'=' dropped,
    other sources (load()ed strings, LuaJIT's built-ins) as short_src."""
    src = urllib.parse.unquote(src, encoding="latin-1")
    if src[:1] in "@=":
        src = src[1:]
    else:
        src = '[string "%s"]' % src.split("\n")[0]
    return (src, int(line))

def signed(n):
    return n - (1 << 64) if n >= 1 << 63 else n

def hook(path):
    fn, edge, cmp, lib = {}, {}, set(), {}
    for ln in open(path, encoding="latin-1"):
        f = ln.split()
        if f[0] == "fn":
            fn[key(f[3], f[2])] = int(f[1])
        elif f[0] == "edge":
            edge[(key(f[3], f[2]), key(f[5], f[4]))] = int(f[1])
        elif f[0] == "sortcmp":
            cmp.add(key(f[2], f[1]))
        elif f[0] == "lib":
            lib[tuple(sorted(urllib.parse.unquote(x) for x in f[2:]))] = int(f[1])
    return fn, edge, cmp, lib

fn1, edge1, cmp1, lib1 = hook(h1)
fn2, edge2, cmp2, lib2 = hook(h2)
fn3, edge3, cmp3, lib3 = hook(h3)
me = set(k for k in set(fn1) | set(fn2) if k[0].endswith("/realprogs_hook.lua"))
# Left out: functions whose count varies between the three hook runs (a
# count that varies may still agree in two runs: LDoc's string.match calls
# vary by a few in 18,570, from a loop that stops at the first match in
# pairs() order), and
# table.sort's comparators and what they call: how often a comparator runs
# depends on the order of its input, which may come from pairs() over
# tables keyed by tables (their addresses).
varies = set(k for k in set(fn1) | set(fn2) | set(fn3)
             if not fn1.get(k) == fn2.get(k) == fn3.get(k))
order = set(cmp1 | cmp2 | cmp3)
while True:
    more = set(b for a, b in list(edge1) + list(edge2) + list(edge3)
               if a in order) - order
    if not more:
        break
    order |= more
stable = {k: n for k, n in fn1.items()
          if fn2.get(k) == n == fn3.get(k) and k not in me and k not in order}
varies = sorted(varies | order)

got = collections.Counter()
for f in d["functions"]:
    # (Not LuaJIT's library functions written in Lua, line -1 today,
    # file "[builtin]" with the names work: compared by name below.)
    if f["kind"] == "lua" and signed(f["line"]) >= 0 and f["file"] != "[builtin]":
        got[(f["file"], signed(f["line"]))] += f["calls"]
for k, n in sorted(stable.items()):
    if got.get(k, 0) != n:
        bad.append("%s:%d: the hook counted %d calls, ljlog %d" % (k[0], k[1], n, got.get(k, 0)))
# A Lua function ljlog saw called that the hook never saw.
for k, n in sorted(got.items()):
    if n and k not in fn1 and k not in fn2 and k not in fn3:
        bad.append("%s:%d: %d calls in ljlog, none seen by the hook" % (k[0], k[1], n))
if len(stable) < 100:
    bad.append("only %d Lua functions counted alike by the three hook runs" % len(stable))
if not bad:
    print("ok: %s: %s [calls,alloc,gc]: %d Lua functions, exact call counts (%d calls); "
          "%d left out (counts that vary from run to run, table.sort comparators):%s"
          % (test, prog, len(stable), sum(stable.values()), len(varies),
             "".join(" %s:%d" % k for k in varies[:3]) + (" ..." if len(varies) > 3 else "")))

# C and fast functions by name: those the hook runs counted alike, but
# for a count known to follow pairs() order over string keys (LuaJIT seeds
# its string hash at random in each process): LDoc's string.match, called
# by the loop above until its first match. Three hook runs may agree on
# one count and ljlog's run see another (18,582 against 18,583, in CI).
by_order = {"ldoc": {"string.match"}}.get(prog, set())
cgot = collections.Counter()
for f in d["functions"]:
    cgot[f["name"]] += f["calls"]
libs = {k: n for k, n in lib1.items()
        if lib2.get(k) == n == lib3.get(k) and not by_order & set(k)}
unnamed, nlib, ncalls = [], 0, 0
for names, n in sorted(libs.items()):
    found = [k for k in names if k in cgot]
    if not found:
        unnamed.append("/".join(names))
    elif len(found) > 1:
        bad.append("one function, several entries: %s" % ", ".join(found))
    else:
        nlib, ncalls = nlib + 1, ncalls + n
        if cgot[found[0]] != n:
            bad.append("%s: the hook counted %d calls, ljlog %d" % (found[0], n, cgot[found[0]]))
want_co = 1 + sum(n for names, n in libs.items()
                 if "coroutine.create" in names or "coroutine.wrap" in names)
if d["coroutines"] != want_co:
    bad.append("coroutines %d, expected %d (main + coroutine.create + coroutine.wrap)"
               % (d["coroutines"], want_co))
if d["unmatched_exits"] or d["warnings"]:
    bad.append("unmatched_exits %d, warnings %r" % (d["unmatched_exits"], d["warnings"][:5]))
if nlib < 10:
    bad.append("only %d library functions found by name in the report" % nlib)
elif not bad:
    print("ok: %s: %s [calls,alloc,gc]: %d library functions, exact call counts (%d calls)"
          % (test, prog, nlib, ncalls))
print("info: %s: %s: names: %d library functions the hook counted are not in the report by name%s"
      % (test, prog, len(unnamed), (": " + ", ".join(unnamed[:6])) if unnamed else ""))
if strict_names and unnamed:
    bad.append("REALPROGS_STRICT_NAMES=1: library functions not in the report by name: " + ", ".join(unnamed))

h = d["heap"]
vm = d["vm_list"][0] if d.get("vm_list") else {}
bal = h["attach"] + h["alloc_bytes"] - h["free_bytes"]
if d["vms"] != 1:
    bad.append("vms %d, expected 1" % d["vms"])
elif not (bal == h["live"] == vm.get("heap_live") == vm.get("heap_detach")):
    bad.append("heap: attach %d + allocated %d - freed %d = %d; live %d, the VM's heap_live %s, heap_detach %s"
               % (h["attach"], h["alloc_bytes"], h["free_bytes"], bal, h["live"],
                  vm.get("heap_live"), vm.get("heap_detach")))
elif h["alloc_bytes"] < (1 << 20) or h["free_bytes"] < (1 << 20):
    bad.append("heap: less than 1 MiB allocated or freed: %r" % h)
else:
    print("ok: %s: %s [calls,alloc,gc]: heap %d at attach + %d allocated - %d freed = %d = the VM's count at detach"
          % (test, prog, h["attach"], h["alloc_bytes"], h["free_bytes"], bal))

# Edges: caller -> callee, both Lua functions.
def frame(s):
    """A folded frame's function as (chunk, line), or None."""
    c = re.match(r"^main_chunk_\((.*)\)$", s)
    if c:
        return (c.group(1), 0)
    m = re.search(r"\(([^()]*):(-?\d+)\)$", s) or re.match(r"^(.*):(-?\d+)$", s)
    return (m.group(1), signed(int(m.group(2)))) if m else None

def folded_key(k):
    return (re.sub(r"[; \n]", "_", k[0]), k[1])

elines = open(epath, encoding="latin-1").read().splitlines()
if elines and elines[0].startswith("unavailable: "):
    msg = "info: %s: %s: edges: `ljlog folded --calls --count` %s" % (test, prog, elines[0])
    print(msg)
    if strict_edges:
        bad.append("REALPROGS_STRICT_EDGES=1 and no edge counts: " + elines[0])
else:
    gedge = collections.Counter()
    for ln in elines:
        path, _, n = ln.rpartition(" ")
        fr = path.split(";")
        if len(fr) >= 2:
            a, b = frame(fr[-2]), frame(fr[-1])
            if a and b:
                gedge[(a, b)] += int(n)
    want = {}
    for (a, b), n in edge1.items():
        if edge2.get((a, b)) == n == edge3.get((a, b)) and a not in me and b not in me and b not in order:
            want[(folded_key(a), folded_key(b))] = n
    miss = [(e, n, gedge.get(e, 0)) for e, n in sorted(want.items()) if gedge.get(e, 0) != n]
    seen = set((folded_key(a), folded_key(b)) for a, b in list(edge1) + list(edge2) + list(edge3))
    counted = set(folded_key(k) for k in stable)
    extra = [(e, n) for e, n in sorted(gedge.items())
             if e not in seen and e[0] in counted and e[1] in counted]
    print("info: %s: %s: edges: %d Lua -> Lua edges counted alike by the three hook runs, "
          "%d with other counts in ljlog, %d in ljlog only (between functions the hook counted)"
          % (test, prog, len(want), len(miss), len(extra)))
    for (a, b), w, g in miss[:5]:
        print("info:   %s:%d -> %s:%d: hook %d, ljlog %d" % (a + b + (w, g)))
    for (a, b), g in extra[:5]:
        print("info:   %s:%d -> %s:%d: ljlog %d, the hook none" % (a + b + (g,)))
    if strict_edges and (miss or extra or not want):
        bad.append("REALPROGS_STRICT_EDGES=1: %d edge counts differ, %d edges the hook did not see"
                   % (len(miss), len(extra)))

if bad:
    print("\n".join(bad[:40]), file=sys.stderr)
    if len(bad) > 40:
        print("... %d more" % (len(bad) - 40), file=sys.stderr)
    sys.exit(1)
PY
}

# check_samples PROG LABEL OWN ENTRY: samples taken and accounted for; stacks reach
# the entry chunk; the top functions are the program's.
check_samples() {
	local prog=$1 label=$2 own=$3 entry=$4
	python3 - "$prog" "$label" "$T/$prog.$label.json" "$own" "$entry" "$test_name" <<'PY' ||
import json, os, re, sys
prog, label, jpath, own, entry, test = sys.argv[1:]
own = own.split("\n")
d = json.load(open(jpath))
bad = []
n, dropped, signals = d["samples"], d["samples_dropped"], d["signals"]
st = d["states"]
if n < 100:
    bad.append("%d samples, expected at least 100" % n)
if n + dropped != signals:
    bad.append("samples %d + dropped %d != signals %d" % (n, dropped, signals))
# Drops are counted (the signal buffer was full: the helper thread that
# drains it got no CPU in time, as on a busy machine), exactly (above);
# how many there are is the machine's: shown, not judged. A fresh clone's
# plain pass, with two other tests beside this one on 2 cores, lost 609
# of 1064 at 250us wall-clock (a ring of 128 then; the ring holds 100 ms
# of such samples now); under qemu-user 499 of 756 at 1 ms (CI). That
# samples make it at all is judged by the count (at least 100).
if dropped * 2 > n + dropped:
    print("info: %s: %s [%s]: %d of %d samples dropped (more than half)%s"
          % (test, prog, label, dropped, n + dropped,
             ", under qemu-user" if os.environ["E2E_EMULATED"] == "1" else ""))

fs = d["functions"]
def mine(f):
    """A Lua function of the program's files, or of code it load()ed
    (LDoc's templates), not one of LuaJIT's built-ins (line -1)."""
    if f["kind"] != "lua" or f["line"] == (1 << 64) - 1:
        return False
    return f["file"].startswith("[string ") or any(
        f["file"] == o or (o.endswith("/") and f["file"].startswith(o)) for o in own)
running = st.get("interp", 0) + st.get("c", 0) + st.get("trace", 0)
main = [f for f in fs if f["kind"] == "lua" and f["file"] == entry and f["line"] == 0]
top = main[0]["samples_total"] if main else 0
if top * 10 < running * 9:
    bad.append("the entry chunk %s:0 is on %d samples, less than 90%% of the %d in states interp, c, trace"
               % (entry, top, running))
lua = sorted((f for f in fs if f["kind"] == "lua"), key=lambda f: -f["samples"])[:3]
if len(lua) < 3 or not all(mine(f) and f["samples"] for f in lua):
    bad.append("the 3 Lua functions with the most samples are not all the program's: %s"
               % ", ".join("%s %d" % (f["name"], f["samples"]) for f in lua))
# Its share of the samples taken in Lua code (states interp and trace): a
# share of all running samples would move with the speed of the C side,
# which a preloaded sanitizer runtime slows (file:read, the loaders).
elif lua[0]["samples"] * 50 < st.get("interp", 0) + st.get("trace", 0):
    bad.append("the program's busiest Lua function %s has %d samples, less than 2%% of the %d in states interp, trace"
               % (lua[0]["name"], lua[0]["samples"], st.get("interp", 0) + st.get("trace", 0)))
guest = sorted((f for f in fs if f["kind"] in ("lua", "c", "fast")), key=lambda f: -f["samples"])
if bad:
    print("\n".join("%s [%s]: %s" % (prog, label, b) for b in bad), file=sys.stderr)
    sys.exit(1)
print("ok: %s: %s [%s]: %d samples (%d dropped), entry chunk on %d of %d running; top: %s"
      % (test, prog, label, n, dropped, top, running,
         ", ".join("%s %d" % (re.sub(r"/\S*/", "", f["name"]), f["samples"]) for f in guest[:4])))
PY
		fail "$prog [$label]: sample checks failed (see above)"
}

# check_names PROG JSON...: functions with names a Lua programmer cannot read.
check_names() {
	local prog=$1
	shift
	python3 - "$prog" "$strict_names" "$test_name" "$@" <<'PY' || fail "$prog: REALPROGS_STRICT_NAMES=1: unreadable function names (see above)"
import json, re, sys
prog, strict, test = sys.argv[1:4]
found = {}
for path in sys.argv[4:]:
    for f in json.load(open(path))["functions"]:
        if re.fullmatch(r"ffid:\d+", f["name"]):
            found.setdefault("ffid:N", set()).add(f["name"])
        elif re.fullmatch(r"0x[0-9a-fA-F]+", f["name"]):
            found.setdefault("0x address", set()).add(f["name"])
        if f["line"] == (1 << 64) - 1:
            found.setdefault("line 2^64-1", set()).add(f["name"])
print("info: %s: %s: names: %s" % (test, prog, "; ".join(
    "%d %s (%s)" % (len(v), k, ", ".join(sorted(v)[:4])) for k, v in sorted(found.items())) or "none unreadable"))
if strict == "1" and found:
    sys.exit(1)
PY
}

# openresty_luajit: the luajit run is OpenResty's (table.isempty).
openresty_luajit() {
	"$LUAJIT" -e 'require("table.isempty")' >/dev/null 2>&1
}

# check_stack_edges PROG LABEL: every sampled stack of the run is a path
# of the exact call graph of the calls run (stackedges.py, as in
# stackedges.sh), from the thread's root.
check_stack_edges() {
	local prog=$1 label=$2
	if grep -q '^unavailable: ' "$T/$prog.edges"; then
		echo "info: $test_name: $prog [$label]: stack edges not judged: $(head -n 1 "$T/$prog.edges")"
		return 0
	fi
	ljlog folded --lua --no-traces "$T/$prog.$label.ljlog" >"$T/$prog.$label.folded" 2>"$T/$prog.$label.ferr" ||
		{ show "$T/$prog.$label.ferr"; fail "$prog [$label]: folded --lua failed"; }
	if python3 "$E2E/stackedges.py" "$T/$prog.edges" "$T/$prog.$label.folded" \
		>"$T/$prog.$label.edges.res" 2>"$T/$prog.$label.edges.bad"; then
		ok "$prog [$label]: $(cat "$T/$prog.$label.edges.res")"
	elif emulated || openresty_luajit; then
		# Open bugs, shown, not judged: Debian's arm64 LuaJIT under
		# qemu-user, samples in traces lose inlined frames (luacheck:
		# parse_subexpression -> lex_ident, without skip_token and
		# next_token between); OpenResty's LuaJIT, a side trace's
		# snapshots lack the frames it inherits below its start (1
		# luacheck run in about 15: check_and_skip_closing_token ->
		# lex_ident, trace 118 of root 102).
		echo "info: $test_name: $prog [$label]: $(wc -l <"$T/$prog.$label.edges.bad") edge lines not in the exact graph (not judged $(emulated && echo under qemu-user || echo on OpenResty\'s LuaJIT)): $(head -n 2 "$T/$prog.$label.edges.bad" | tr '\n' ' ')"
	else
		show "$T/$prog.$label.edges.bad"
		fail "$prog [$label]: sampled stacks that are no path of the exact call graph"
	fi
}

# realprog PROG SCRIPT ARGS OWN: all of the above for one program.
realprog() {
	local prog=$1 script=$2 args=$3 own=$4 label
	# shellcheck disable=SC2086
	run "$prog" plain luajit_plain "$script" $args
	[ -s "$T/$prog.plain.out" ] || { show "$T/$prog.plain.err"; fail "$prog: the unprofiled run printed nothing"; }
	for i in 1 2 3; do
		# shellcheck disable=SC2086
		run "$prog" hook$i luajit_plain "$HOOK" "$T/$prog.hook$i" "$script" $args
		same_as_plain "$prog" "hook$i"
	done

	# shellcheck disable=SC2086
	run "$prog" calls profile "file=$T/$prog.calls.ljlog,calls,alloc,gc" "$script" $args
	same_as_plain "$prog" calls
	check_complete "$T/$prog.calls.ljlog"
	report_json "$T/$prog.calls.ljlog" "$T/$prog.calls.json"
	ok "$prog [calls,alloc,gc]: exit status $(cat "$T/$prog.plain.rc"), same output, complete log"
	check_calls "$prog"

	# Under qemu the helper thread can't drain 4000 samples a second (nor
	# 1000 on a loaded machine).
	local rate=250us
	! emulated || rate=2ms
	for label in jiton jitoff; do
		[ -n "$tsan" ] && [ $label = jiton ] && continue
		local j=-jon
		[ $label = jitoff ] && j=-joff
		# shellcheck disable=SC2086
		run "$prog" $label profile "file=$T/$prog.$label.ljlog,sample=$rate,wall" $j "$script" $args
		same_as_plain "$prog" $label
		check_complete "$T/$prog.$label.ljlog"
		report_json "$T/$prog.$label.ljlog" "$T/$prog.$label.json"
		ok "$prog [sample, $j]: exit status $(cat "$T/$prog.plain.rc"), same output, complete log"
		[ -n "$tsan" ] || check_samples "$prog" $label "$own" "$script"
		check_stack_edges "$prog" $label
	done
	check_names "$prog" "$T/$prog".*.json
}

realprog luacheck "$lc_bin" "$lc_args" "$lc_own"
# Under qemu-user luacheck alone (each took about a minute there).
if emulated; then
	echo "info: $test_name: LDoc left out under qemu-user (luacheck ran)"
else
	realprog ldoc "$ldoc_bin" "$ldoc_args" "$ldoc_own"
fi
