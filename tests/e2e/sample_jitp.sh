#!/usr/bin/env bash
# ljlog e2e: the same top functions as LuaJIT's own profiler.
# sample_jitp.lua has three functions of clearly different costs. It runs
# under jit.profile (the engine of -jp, mode "fi1": by function, 1 ms;
# sample_jitprofile.lua counts samples per innermost Lua function) and
# under ljlog (sample=1ms). jit.profile samples at bytecode boundaries,
# never inside a library function, so ljlog's samples are compared by
# innermost *Lua* function: `ljlog folded --lua` stacks charged to their
# innermost Lua function (library functions count for their Lua caller);
# with the JIT on (library calls compiled into the traces) also the
# report's per-function `samples` over Lua functions. The top three must
# be the same functions, the first the same. JIT on and off.
. "$(dirname "$0")/lib.sh"

# ThreadSanitizer runs a signal handler late, at the next call it
# intercepts, which LuaJIT's machine code never makes: under it ljlog takes
# a handful of samples at the wrong places, so accuracy means nothing.
case $LJLOG_TEST_PRELOAD in
*tsan*) echo "SKIP: $test_name: sampling accuracy cannot be measured under ThreadSanitizer"; exit 77 ;;
esac

prog=$E2E/sample_jitp.lua
rounds=${SAMPLE_JITP_ROUNDS:-150}

compare() { # JIT
	local jit=$1 log=$T/jitp.ljlog
	rm -f "$log" "$T/jp.txt"
	# The iterations that make the costs 4 : 2 : 1 on this machine.
	local n
	n=$(luajit_plain "$prog" 0 "$jit" calibrate) || fail "[jit $jit] the calibration run failed"
	anchor_run "$T/jp.out" "$T/jp.err" luajit_plain "$E2E/sample_jitprofile.lua" "$T/jp.txt" fi1 \
		"$prog" "$rounds" "$jit" $n || { show "$T/jp.err"; fail "[jit $jit] the jit.profile run failed"; }
	profile "file=$log,sample=1ms" "$prog" "$rounds" "$jit" $n >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "[jit $jit] the profiled run failed"; }
	cmp -s "$T/jp.out" "$T/out" ||
		fail "[jit $jit] output '$(cat "$T/out")', under jit.profile '$(cat "$T/jp.out")'"
	check_complete "$log"
	report_json "$log" "$T/r.json"
	ljlog folded --lua "$log" >"$T/folded" 2>"$T/folded.err" ||
		{ show "$T/folded.err"; fail "[jit $jit] ljlog folded --lua failed"; }
	python3 - "$T/jp.txt" "$T/r.json" "$T/folded" "$jit" <<'PY' || fail "[jit $jit] top functions differ from jit.profile's (see above)"
import json, sys
jp_path, jpath, fpath, jit = sys.argv[1:]
jp = {}
for ln in open(jp_path):
    n, k = ln.rstrip("\n").split("\t", 1)
    if k == "J":
        continue  # the JIT compiler's (ljlog's "(jit compiler)")
    jp[k] = jp.get(k, 0) + int(n)
d = json.load(open(jpath))
# Lua functions by chunk:line, as jit.profile's; named ones read
# "NAME (chunk:line)", in folded stacks with '_' for ' '.
def key(f):
    return "%s:%d" % (f["file"], f["line"])
lua = {}
for f in d["functions"]:
    if f["kind"] == "lua":
        lua[f["name"]] = lua[f["name"].replace(" ", "_")] = f

by_field = {}
for f in d["functions"]:
    if f["kind"] == "lua":
        by_field[key(f)] = by_field.get(key(f), 0) + f["samples"]
by_leaf = {}
for ln in open(fpath):
    stack, n = ln.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    for fr in reversed(frames):
        if fr in lua:
            k = key(lua[fr])
            by_leaf[k] = by_leaf.get(k, 0) + int(n)
            break

def top(counts, k=3):
    return sorted((n, name) for name, n in counts.items() if n > 0)[::-1][:k]

want = top(jp)
if len(want) < 3 or sum(jp.values()) < 200:
    sys.exit("jit.profile: too few samples or functions: %r" % jp)
bad = []
checks = [("folded --lua, innermost Lua function", by_leaf)]
if jit == "on":
    checks.append(("report samples (Lua functions)", by_field))
# The same top function, and the same three on top. Their order below the
# top is not compared: with the JIT on, tables' side traces are compiled
# in another order from run to run and its share moved between 26% and
# 34% (jit.profile) while strings' moved between 15% and 22%; one run of
# each profiler may then swap them. tests/e2e/jitp.sh compares shares
# over several runs.
for label, counts in checks:
    got = top(counts)
    if (got[:1] and got[0][1] != want[0][1]) or \
            sorted(name for _, name in got) != sorted(name for _, name in want):
        bad.append("%s: top %r, jit.profile's %r" % (label, got, want))
if bad:
    sys.exit("[jit %s] %s" % (jit, "; ".join(bad)))
print("ok: sample_jitp: [jit %s] top 3 as jit.profile's: %s; ljlog %s / %s"
      % (jit, ", ".join("%s (%d)" % (k.rsplit("/", 1)[-1], n) for n, k in want),
         [n for n, _ in top(by_field)], [n for n, _ in top(by_leaf)]))
PY
}

compare on
compare off
