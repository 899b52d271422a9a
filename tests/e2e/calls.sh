#!/usr/bin/env bash
# ljlog e2e: per-function call counts equal an independent count.
# calls.lua runs once under a debug.sethook counter (hookcount.lua, JIT off)
# and once under ljlog; every Lua function of calls.lua and a few library
# functions must have exactly the same number of calls in
# `ljlog report --json`, and the log has one coroutine per coroutine the
# hook saw created, plus the main one.
. "$(dirname "$0")/lib.sh"

prog=$E2E/calls.lua

luajit_plain "$E2E/hookcount.lua" "$T/hook.txt" "$prog" >"$T/hook.out" ||
	fail "the hook counter run failed"
profile "file=$T/calls.ljlog,buffer=4k" "$prog" >"$T/prof.out" 2>"$T/prof.err" ||
	{ show "$T/prof.err"; fail "the profiled run failed"; }
cmp -s "$T/hook.out" "$T/prof.out" ||
	fail "the program's output differs under ljlog: '$(cat "$T/hook.out")' vs '$(cat "$T/prof.out")'"
ok "the program's output is the same under ljlog"

check_complete "$T/calls.ljlog"
ok "ljlog check: complete and valid"
report_json "$T/calls.ljlog" "$T/r.json"

python3 - "$T/hook.txt" "$T/r.json" "$prog" <<'EOF' || fail "call counts differ (see above)"
import json, sys
hook_path, json_path, prog = sys.argv[1:]
d = json.load(open(json_path))
want_lua, want_lib = {}, {}
for ln in open(hook_path):
    kind, n, rest = ln.rstrip("\n").split(" ", 2)
    if kind == "lua":
        line, src = rest.split(" ", 1)
        if src == prog:
            want_lua[int(line)] = int(n)
    else:
        want_lib[rest] = int(n)
assert len(want_lua) >= 15, "the hook counted too few functions: %r" % want_lua

got_lua, bad = {}, []
for f in d["functions"]:
    if f["kind"] == "lua" and f["file"] == prog:
        if f["line"] in got_lua:
            bad.append("two entries for line %d" % f["line"])
        got_lua[f["line"]] = f["calls"]
        want_name = "%s:%d" % (prog, f["line"])
        if f["name"] != want_name:
            bad.append("name %r, expected %r" % (f["name"], want_name))
for line in sorted(set(want_lua) | set(got_lua)):
    w, g = want_lua.get(line), got_lua.get(line)
    if w != g:
        bad.append("%s:%d: hook counted %s calls, ljlog reports %s" % (prog, line, w, g))

byname = {f["name"]: f for f in d["functions"]}
for name, w in sorted(want_lib.items()):
    f = byname.get(name)
    g = f["calls"] if f else None
    if f and f["kind"] not in ("c", "fast"):
        bad.append("%s: kind %r, expected c or fast" % (name, f["kind"]))
    if w != g:
        bad.append("%s: hook counted %s calls, ljlog reports %s" % (name, w, g))
# Every coroutine ran Lua code, so each has a COROUTINE record: the main
# one and one per coroutine.create / coroutine.wrap the hook saw.
want_co = 1 + want_lib.get("coroutine.create", 0) + want_lib.get("coroutine.wrap", 0)
if want_co < 10:
    bad.append("the hook saw only %d coroutines" % want_co)
for where, got in (("coroutines", d["coroutines"]),
                   ("vm_list[0].coroutines", d["vm_list"][0]["coroutines"])):
    if got != want_co:
        bad.append("%s: expected %d (main + create + wrap), got %s" % (where, want_co, got))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: calls: %d Lua functions of calls.lua, exact counts (total %d calls)"
      % (len(want_lua), sum(want_lua.values())))
print("ok: calls: library functions, exact counts: %s"
      % ", ".join("%s=%d" % kv for kv in sorted(want_lib.items())))
print("ok: calls: %d coroutines (main + coroutine.create + coroutine.wrap)" % want_co)
EOF
