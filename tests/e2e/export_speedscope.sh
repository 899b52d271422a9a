#!/usr/bin/env bash
# ljlog e2e: speedscope's own importer opens `ljlog export` files. The
# speedscope npm package's built app is served from 127.0.0.1 with the file
# and opened in headless Chromium as speedscope loads a URL
# (#profileURL=...); any console error or warning (but Chromium's GL driver
# notes), page error, alert or "Something went wrong" fails, and every
# profile (switched to with 'n') must show the functions the program ran.
# Both formats (speedscope imports Chrome trace events too), with calls
# and samples (JIT off; a short run, whose speedscope export keeps the
# evented profiles per coroutine), with samples, allocations, GC and trace
# events (JIT on), and a calls log of a few MB (the bounded exports). A file broken on purpose (a close that does not match the open
# frame) must fail the same check. Skips when node, the npm tools or
# chromium are absent (scripts/setup-tools.sh installs them).
. "$(dirname "$0")/lib.sh"
need_speedscope
CHECK="python3 $E2E/export_check.py"

# load FILE NAME...: speedscope loads FILE with no problem and shows each
# NAME; fails with speedscope's messages.
load() {
	local f=$1
	shift
	node "$E2E/speedscope_load.mjs" "$TOOLS" "$f" >"$f.load" 2>"$f.load.err" ||
		{ show "$f.load.err"; fail "speedscope_load.mjs could not run on $f"; }
	$CHECK loaded "$f.load" "$@" || fail "speedscope on $(basename "$f")"
}

profile "file=$T/a.ljlog,nodefaults,calls,sample=1ms" "$E2E/export.lua" 20 20 >/dev/null 2>"$T/a.err" ||
	{ show "$T/a.err"; fail "the calls run failed"; }
check_complete "$T/a.ljlog"
ljlog export -q -f speedscope -o "$T/a.speedscope.json" "$T/a.ljlog" || fail "export speedscope failed"
ljlog export -q -f chrome -o "$T/a.chrome.json" "$T/a.ljlog" || fail "export chrome failed"
lua=$E2E/export.lua
load "$T/a.speedscope.json" "tailer ($lua:19)" "mid ($lua:15)" "thrower ($lua:23)" \
	"deep ($lua:30)" "stepper ($lua:38)" "gen ($lua:44)" "coroutine.yield" "pcall" "error"
ok "speedscope loads the speedscope export of export.lua (calls, coroutines, samples)"
load "$T/a.chrome.json" "tailer ($lua:19)" "stepper ($lua:38)" "gen ($lua:44)" "coroutine.yield"
ok "speedscope loads the chrome export of export.lua"

profile "file=$T/j.ljlog,nodefaults,sample=1ms,alloc,gc,jit" "$E2E/export_sample.lua" >/dev/null 2>"$T/j.err" ||
	{ show "$T/j.err"; fail "the JIT-on run failed"; }
ljlog export -q -f speedscope -o "$T/j.speedscope.json" "$T/j.ljlog" || fail "export speedscope (jit) failed"
ljlog export -q -f chrome -o "$T/j.chrome.json" "$T/j.ljlog" || fail "export chrome (jit) failed"
slua=$E2E/export_sample.lua
load "$T/j.speedscope.json" "work ($slua:3)"
ok "speedscope loads the speedscope export with the JIT on (samples, allocations)"
load "$T/j.chrome.json"
ok "speedscope loads the chrome export with the JIT on (GC, heap, JIT, samples)"

# A calls log of a few MB: the bounded exports (speedscope aggregates the
# calls by call path, chrome is cut with a note) still load.
cat >"$T/many.lua" <<'LUA'
local function leaf(n) return n % 7 end
local function mid(n) return leaf(n) + leaf(n + 1) end
local function top(n) return mid(n) + leaf(n) end
local function rec(d, n) if d == 0 then return top(n) end return rec(d - 1, n) + 0 end
local s = 0
for i = 1, 80000 do s = s + rec(i % 8, i) end
print(s)
LUA
profile "file=$T/m.ljlog,nodefaults,calls" "$T/many.lua" >/dev/null 2>"$T/m.err" ||
	{ show "$T/m.err"; fail "the many-calls run failed"; }
ljlog export -q -f speedscope -o "$T/m.speedscope.json" "$T/m.ljlog" 2>/dev/null || fail "export speedscope (many) failed"
ljlog export -q -f chrome -o "$T/m.chrome.json" "$T/m.ljlog" 2>/dev/null || fail "export chrome (many) failed"
mlua=$T/many.lua
load "$T/m.speedscope.json" "rec ($mlua:4)" "top ($mlua:3)" "mid ($mlua:2)" "leaf ($mlua:1)"
ok "speedscope loads the bounded speedscope export of a $(stat -c %s "$T/m.ljlog")-byte calls log ($(stat -c %s "$T/m.speedscope.json") bytes)"
load "$T/m.chrome.json"
ok "speedscope loads the cut chrome export of it ($(stat -c %s "$T/m.chrome.json") bytes)"

# The check can fail: an evented profile whose close does not match.
python3 - "$T/a.speedscope.json" "$T/broken.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = next(p for p in d["profiles"] if p["type"] == "evented")
ev = p["events"]
i = next(i for i, e in enumerate(ev) if e["type"] == "O" and
         any(x["type"] == "O" and x["frame"] != e["frame"] for x in ev[i + 1:i + 2]))
# Close the outer frame while the inner one is open.
ev.insert(i + 2, {"type": "C", "frame": ev[i]["frame"], "at": ev[i + 1]["at"]})
json.dump(d, open(sys.argv[2], "w"))
PY
node "$E2E/speedscope_load.mjs" "$TOOLS" "$T/broken.json" >"$T/broken.load" 2>"$T/broken.err" ||
	{ show "$T/broken.err"; fail "speedscope_load.mjs could not run on the broken file"; }
if $CHECK loaded "$T/broken.load" >"$T/broken.out" 2>&1; then
	show "$T/broken.load"
	fail "the broken file passed the speedscope check"
fi
grep -q "FAIL: speedscope reported" "$T/broken.out" || { show "$T/broken.out"; fail "the broken file failed for another reason"; }
ok "a broken file (unbalanced close) fails the check: $(head -c 200 "$T/broken.out")"
