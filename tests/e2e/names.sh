#!/usr/bin/env bash
# ljlog e2e: a name for every function (issue 7).
# names.lua makes one function per way a Lua programmer names one (global,
# local function, local = function, field, method, upvalue) and calls
# library functions no table holds (ipairs' and string.gmatch's iterators,
# file methods), FFI functions (JIT off: the call hook sees them), a
# builtin written in Lua (table.remove) and require's searchers. Each is
# checked in `ljlog report --json` by name, kind, file, line and calls.
# Then no function in the reports of names.lua and examples/demo.lua
# (calls, and samples with host stacks) is named "ffid:N", a bare
# address, or has the line -1 (18446744073709551615).
. "$(dirname "$0")/lib.sh"

prog=$E2E/names.lua
echo 'return true' >"$T/names_mod.lua"
export LUA_PATH="$T/?.lua;${LUA_PATH:-;}"

log=$T/names.ljlog
profile "file=$log,calls" "$prog" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "the profiled run of names.lua failed"; }
check_complete "$log"
report_json "$log" "$T/names.json"

python3 - "$T/names.json" "$prog" <<'PY' || fail "names differ (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
prog = sys.argv[2]
fn = {f["name"]: f for f in d["functions"]}
bad = []

def want(name, kind, calls, file=None, line=None):
    f = fn.get(name)
    if not f:
        bad.append("no function named %r (have: %s)" % (name, sorted(fn)))
        return
    if f["kind"] != kind:
        bad.append("%s: kind %r, expected %r" % (name, f["kind"], kind))
    if calls is not None and f["calls"] != calls:
        bad.append("%s: %s calls, expected %s" % (name, f["calls"], calls))
    if file is not None and f["file"] != file:
        bad.append("%s: file %r, expected %r" % (name, f["file"], file))
    if line is not None and f["line"] != line:
        bad.append("%s: line %r, expected %r" % (name, f["line"], line))

src = open(prog).read().split("\n")
def lineof(text):
    return next(i + 1 for i, l in enumerate(src) if text in l)

for name, text in (("gfun", "function gfun("),
                   ("lfun", "local function lfun("),
                   ("lvar", "local lvar = function("),
                   ("M.add", "function M.add("),
                   ("M:get", "function M:get("),
                   ("up", "up = function(")):
    ln = lineof(text)
    want("%s (%s:%d)" % (name, prog, ln), "lua", 3, prog, ln)
want("setup (%s:%d)" % (prog, lineof("local function setup(")), "lua", 1)
want("ipairs (iterator)", "fast", 4)
want("string.gmatch (iterator)", "fast", 4)
want("next", "fast", 1)
want("file:read", "fast", 1)
want("file:close", "fast", 1)
want("abs", "c", 1)
want("getpid", "c", 1)
want("table.remove", "lua", 1, None, 0)
want("package.loaders[2]", "c", None)
f = fn.get("package.loaders[2]")
if f and f["calls"] < 1:
    bad.append("package.loaders[2]: never called")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: names: globals, locals, fields, methods, upvalues, iterators, "
      "file methods, FFI calls, table.remove, package.loaders[2]")
PY
ok "names.lua: every way of naming a function, field by field"

# Started inside a function (ljlog.start): the functions made before the
# attach are named by their maker, mapped from the stack at the attach.
rm -f "$T/start.ljlog"
luajit "$E2E/names_start.lua" "$T/start.ljlog" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "names_start.lua failed"; }
check_complete "$T/start.ljlog"
report_json "$T/start.ljlog" "$T/start.json"
line=$(grep -n "local function work(" "$E2E/names_start.lua" | cut -d: -f1)
expect_eq "names_start.lua: calls of work" 5 \
	"$(json_get "$T/start.json" "fn.get('work ($E2E/names_start.lua:$line)', {}).get('calls')")"
ok "names_start.lua: ljlog.start inside a function, its callees named"

# no_bad_names JSON LABEL: no ffid:N, bare address or line -1.
no_bad_names() {
	python3 - "$1" "$2" <<'PY' || fail "$2: bad names (see above)"
import json, re, sys
d = json.load(open(sys.argv[1]))
bad = []
for f in d["functions"]:
    n = f["name"]
    if "ffid:" in n or re.search(r"(^|[\s(])0x[0-9a-fA-F]+", n) or \
       "18446744073709551615" in n or "4294967295" in n or \
       f["line"] in (18446744073709551615, 4294967295):
        bad.append("%r (line %s)" % (n, f["line"]))
if bad:
    print("%s: %s" % (sys.argv[2], ", ".join(bad)), file=sys.stderr)
    sys.exit(1)
print("ok: %s: %d functions, none unnamed" % (sys.argv[2], len(d["functions"])))
PY
}
no_bad_names "$T/names.json" "names.lua (calls)"

for opts in calls sample=200us,calls sample=200us,wall; do
	rm -f "$T/demo.ljlog"
	profile "file=$T/demo.ljlog,$opts" "$top_srcdir/examples/demo.lua" >"$T/out" 2>"$T/err" ||
		{ show "$T/err"; fail "the profiled run of demo.lua ($opts) failed"; }
	check_complete "$T/demo.ljlog"
	report_json "$T/demo.ljlog" "$T/demo.json"
	no_bad_names "$T/demo.json" "demo.lua ($opts)"
	# Every function of demo.lua is a local function: named, whichever
	# of calls and samples maps it first.
	python3 - "$T/demo.json" "$opts" <<'PY' || fail "demo.lua ($opts): unnamed Lua functions (see above)"
import json, re, sys
d = json.load(open(sys.argv[1]))
lua = [f for f in d["functions"] if f["kind"] == "lua" and f["file"].endswith("demo.lua")]
bad = [f["name"] for f in lua if f["line"] > 0 and
       not re.match(r"^[A-Za-z_]\w* \(.*demo\.lua:%d\)$" % f["line"], f["name"])]
if bad or not any(f["line"] > 0 for f in lua):
    print("demo.lua (%s): %s" % (sys.argv[2], bad or "no Lua function"), file=sys.stderr)
    sys.exit(1)
print("ok: demo.lua (%s): named: %s" % (sys.argv[2], ", ".join(sorted(f["name"] for f in lua if f["line"] > 0))))
PY
done
ok "names.lua and demo.lua: no function named ffid:N, by a bare address or at line -1"
