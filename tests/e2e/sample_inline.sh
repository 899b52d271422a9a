#!/usr/bin/env bash
# ljlog e2e: samples in compiled code name the Lua functions the JIT
# inlined, and the line (issue: "a profile that tells the truth").
# sample_inline.lua's small functions are inlined into their caller's
# trace; their samples are taken in machine code, where only the trace's
# snapshots know the frames. Checked:
#  1. ffi: spin_a and spin_b call the same busy C function through the FFI
#     (2 : 1), a cost the JIT does not change: with the JIT on, every Lua
#     function with at least 2% of the samples (by innermost Lua function)
#     in either run has a share within 10 points of the JIT-off run's
#     (where the interpreter's stack is exact), and the C function hangs
#     under spin_a / spin_b, not directly under their caller.
#  2. lua: lookup and weigh read tables: at least 90% of the samples taken
#     in a trace carry a real line (not 0); side by side with jit.profile
#     (LuaJIT's own profiler, mode "fi1"), the same top function, and every
#     function with at least 10% of its samples has at least half that.
. "$(dirname "$0")/lib.sh"

case $LJLOG_TEST_PRELOAD in
*tsan*) echo "SKIP: $test_name: sampling accuracy cannot be measured under ThreadSanitizer"; exit 77 ;;
esac

prog=$E2E/sample_inline.lua
libs=$top_builddir/tests/e2e/.libs
[ -e "$libs/sample_ffi.so" ] || fail "test library not built ($libs/sample_ffi.so)"

run() { # NAME ROUNDS JIT KIND
	local log=$T/$1.ljlog
	rm -f "$log"
	profile "file=$log,sample=500us,wall" "$prog" "$libs/sample_ffi.so" "$2" "$3" "$4" \
		>"$T/$1.out" 2>"$T/$1.err" || { show "$T/$1.err"; fail "[$1] the profiled run failed"; }
	[ "$(cat "$T/$1.out")" = true ] || fail "[$1] output '$(cat "$T/$1.out")'"
	check_complete "$log"
	report_json "$log" "$T/$1.json"
	ljlog folded "$log" >"$T/$1.folded" 2>"$T/$1.ferr" ||
		{ show "$T/$1.ferr"; fail "[$1] ljlog folded failed"; }
	ljlog dump -v "$log" >"$T/$1.dump" 2>"$T/$1.derr" ||
		{ show "$T/$1.derr"; fail "[$1] ljlog dump failed"; }
}

run ffi_on "${INLINE_FFI_ROUNDS:-1000}" on ffi
run ffi_off "${INLINE_FFI_ROUNDS:-1000}" off ffi
run lua_on "${INLINE_LUA_ROUNDS:-300}" on lua
anchor_run "$T/jp.out" "$T/jp.err" luajit "$E2E/sample_jitprofile.lua" "$T/jp.txt" fi1 \
	"$prog" "$libs/sample_ffi.so" "${INLINE_LUA_ROUNDS:-300}" on lua ||
	{ show "$T/jp.err"; fail "the jit.profile run failed"; }

python3 - "$T" "$prog" <<'PY' || fail "inlined frames (see above)"
import json, re, sys
T, prog = sys.argv[1:]
src = open(prog).read().split("\n")
def defline(fn):  # line of "local function fn(" in the program's source
    for i, l in enumerate(src, 1):
        if re.match(r"local function %s\(" % fn, l):
            return i
    sys.exit("no function %s in %s" % (fn, prog))
chunk = prog.rsplit("/", 1)[-1]
key = {"%s:%d" % (chunk, defline(f)): f for f in
       ("lookup", "weigh", "spin_a", "spin_b", "outer_lua", "outer_ffi")}

def fname(name):  # our function for a reported name, by its chunk:line
    m = re.search(r"([\w.-]+\.lua:\d+)\)?$", name)
    return key.get(m.group(1)) if m else None

def shares(run):  # % of samples by innermost Lua function (folded stacks)
    out, tot = {}, 0
    for ln in open("%s/%s.folded" % (T, run)):
        stack, n = ln.rstrip("\n").rsplit(" ", 1)
        for fr in reversed(stack.split(";")):
            if re.search(r"\.lua:\d+\)?$|^main_chunk_\(", fr):
                f = fname(fr) or fr
                out[f] = out.get(f, 0) + int(n)
                tot += int(n)
                break
    if tot < 300:
        sys.exit("[%s] %d samples in Lua functions: too few" % (run, tot))
    return {k: 100.0 * v / tot for k, v in out.items()}

bad = []
on, off = shares("ffi_on"), shares("ffi_off")
for f in sorted(set(on) | set(off)):
    a, b = on.get(f, 0.0), off.get(f, 0.0)
    if max(a, b) >= 2 and abs(a - b) > 10:
        bad.append("ffi: %s has %.1f%% with the JIT on, %.1f%% off" % (f, a, b))
print("ffi shares, JIT on / off: " + ", ".join(
    "%s %.1f/%.1f" % (f, on.get(f, 0), off.get(f, 0))
    for f in sorted(set(on) | set(off)) if max(on.get(f, 0), off.get(f, 0)) >= 2))

# The C function's caller in the folded stacks (JIT on).
under = {}
for ln in open("%s/ffi_on.folded" % T):
    stack, n = ln.rstrip("\n").rsplit(" ", 1)
    fr = stack.split(";")
    for i, x in enumerate(fr):
        if x.startswith("ljlog_test_ffi_spin") and i:
            j = i - 1
            while j > 0 and re.match(r"trace \d+$", fr[j]):
                j -= 1  # the trace frame between Lua and C
            p = fname(fr[j]) or fr[j]
            under[p] = under.get(p, 0) + int(n)
            break
tot = sum(under.values())
good = under.get("spin_a", 0) + under.get("spin_b", 0)
print("ffi (JIT on): ljlog_test_ffi_spin called from %r" % under)
if tot < 200 or good < 0.9 * tot:
    bad.append("ffi: of %d samples in the C function, %d hang under spin_a "
               "or spin_b" % (tot, good))

# Lines of samples in traces (dump -v: "state trace ... lua N [f:line, ...").
nt = nz = nh = 0
for ln in open("%s/lua_on.dump" % T):
    m = re.search(r"state trace .* lua (\d+) \[([^\]]*)\]", ln)
    if not m or m.group(1) == "0":
        continue
    nt += 1
    first = m.group(2).split(", ")[0]
    lm = re.search(r":(\d+)\)?$", first)  # "chunk:N" or "name (chunk:N)"
    if lm and lm.group(1) != "0":
        nz += 1
    # A function's header line compiles to nothing: no sample in a trace
    # is on it (lookup and weigh have their bodies on the lines below).
    fm = re.match(r"(\w+) \(.*:(\d+)\)$", first)
    if fm and fm.group(1) in ("lookup", "weigh") and lm and \
            int(lm.group(1)) == defline(fm.group(1)):
        nh += 1
print("lua (JIT on): %d of %d samples in traces carry a line, %d on a "
      "header line" % (nz, nt, nh))
if nt < 200 or nz < 0.9 * nt:
    bad.append("lua: %d of %d samples in traces carry a line (need 90%%)"
               % (nz, nt))
if nh:
    bad.append("lua: %d samples in traces on the header line of lookup or "
               "weigh (a line that compiles to nothing)" % nh)

# Side by side with jit.profile.
jp = {}
for ln in open("%s/jp.txt" % T):
    n, k = ln.rstrip("\n").split("\t", 1)
    if k == "J":
        continue  # the JIT compiler's (ljlog's "(jit compiler)")
    k = fname(k) or k
    jp[k] = jp.get(k, 0) + int(n)
jt = sum(jp.values())
lj = shares("lua_on")
top = lambda d: [k for k, _ in sorted(d.items(), key=lambda x: -x[1])][:2]
print("lua (JIT on), top functions: jit.profile %s; ljlog %s" % (
    ", ".join("%s %.0f%%" % (k, 100.0 * jp[k] / jt) for k in top(jp)),
    ", ".join("%s %.0f%%" % (k, lj[k]) for k in top(lj))))
# The same top function; every function with at least 10% of jit.profile's
# samples keeps at least half that share. Not the order below the top:
# outer_lua's own loop (its index and sums, 13-17% here) and weigh (14-16%)
# come out even, and jit.profile, which samples at the next line check,
# gives outer_lua's part to the function called next.
if top(jp)[0] != top(lj)[0]:
    bad.append("lua: top function %s, jit.profile's %s" % (top(lj)[0], top(jp)[0]))
for k in sorted(jp):
    pj = 100.0 * jp[k] / jt
    if pj >= 10 and lj.get(k, 0.0) < pj / 2:
        bad.append("lua: %s has %.0f%% of jit.profile's samples, %.0f%% of ljlog's"
                   % (k, pj, lj.get(k, 0.0)))
if bad:
    sys.exit("\n".join(bad))
PY
ok "inlined frames and lines in compiled code"
