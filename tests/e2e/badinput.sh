#!/usr/bin/env bash
# ljlog e2e: bad input never crashes or changes the profiled program.
# Bad options, an unwritable log path and a LuaJIT the profiler was not
# built for each get one clear line on stderr while the program runs on,
# unprofiled, with its own output and exit status; the Lua API returns
# nil + message instead of raising; `ljlog record` refuses a bad option
# without running the program. Every reading command says one line for a
# file that is not a log (exit 3) and for an empty one (exit 1), and one
# line plus "see 'ljlog CMD --help'" for an unknown option (exit 2).
. "$(dirname "$0")/lib.sh"

prog=$E2E/plain.lua
rc=0
luajit_plain "$prog" >"$T/ref.out" 2>"$T/ref.err" || rc=$?
ref_rc=$rc
[ "$ref_rc" -eq 7 ] || fail "plain.lua unprofiled: expected exit 7, got $ref_rc"
[ -s "$T/ref.err" ] && fail "plain.lua unprofiled wrote to stderr: $(cat "$T/ref.err")"

# unchanged LABEL STDERR-FILE: the run's stdout/exit status are the
# reference ones and stderr is exactly one line.
unchanged() {
	expect_eq "$1: exit status" "$ref_rc" "$rc"
	cmp -s "$T/ref.out" "$T/run.out" ||
		fail "$1: output '$(cat "$T/run.out")', expected '$(cat "$T/ref.out")'"
	local lines
	lines=$(wc -l <"$2")
	[ "$lines" -eq 1 ] || { show "$2"; fail "$1: expected one line on stderr, got $lines"; }
}

# -- Bad LUAJIT_PROFILE options -------------------------------------------------

for spec in "log:bogus" "log:calls,bogus,alloc" "log:file=$T/x.ljlog,bogus=3"; do
	rc=0
	LUAJIT_PROFILE=$spec luajit -lljlog "$prog" >"$T/run.out" 2>"$T/run.err" || rc=$?
	unchanged "LUAJIT_PROFILE=$spec" "$T/run.err"
	grep -q "'bogus" "$T/run.err" || fail "LUAJIT_PROFILE=$spec: the message does not name 'bogus': $(cat "$T/run.err")"
	for o in calls alloc gc file= buffer= flush=; do
		grep -q -- "$o" "$T/run.err" ||
			fail "LUAJIT_PROFILE=$spec: the message does not list '$o': $(cat "$T/run.err")"
	done
	[ -e "$T/x.ljlog" ] && fail "LUAJIT_PROFILE=$spec: a log was written"
	ok "LUAJIT_PROFILE=$spec: one line naming 'bogus' and the valid options; output and status unchanged"
done

for spec in "log:buffer=12q" "log:flush=10" "log:file=" "perf:calls"; do
	rc=0
	LUAJIT_PROFILE=$spec luajit -lljlog "$prog" >"$T/run.out" 2>"$T/run.err" || rc=$?
	unchanged "LUAJIT_PROFILE=$spec" "$T/run.err"
	bad=${spec#log:}
	bad=${bad%%:*}
	grep -qF -- "$bad" "$T/run.err" || fail "LUAJIT_PROFILE=$spec: the message does not name '$bad': $(cat "$T/run.err")"
	ok "LUAJIT_PROFILE=$spec: one line naming '$bad'; output and status unchanged"
done

# -- A log path that cannot be written ------------------------------------------

bad=/nonexistent/dir/x.ljlog
rc=0
LUAJIT_PROFILE="log:file=$bad" luajit -lljlog "$prog" >"$T/run.out" 2>"$T/run.err" || rc=$?
unchanged "file=$bad" "$T/run.err"
grep -qF "$bad" "$T/run.err" || fail "file=$bad: the message does not name the path: $(cat "$T/run.err")"
ok "file=$bad: one line naming the path; output and status unchanged"

# -- The Lua API returns nil + message ------------------------------------------

cat >"$T/api.lua" <<EOF
local ljlog = require("ljlog")
local function expect_fail(what, pattern, ok, msg)
	assert(ok == nil, what .. ": expected nil, got " .. tostring(ok))
	assert(type(msg) == "string" and msg:find(pattern, 1, true),
		what .. ": message " .. tostring(msg) .. " does not mention " .. pattern)
	print(what .. ": nil, " .. msg)
end
assert(ljlog.running() == false)
expect_fail('start("bogus")', "bogus", ljlog.start("bogus"))
expect_fail('start{bogus=true}', "bogus", ljlog.start({ bogus = true }))
expect_fail('start{buffer="huge"}', "huge", ljlog.start({ buffer = "huge" }))
expect_fail('start{file=unwritable}', "$bad", ljlog.start({ file = "$bad" }))
expect_fail('start(42)', "", ljlog.start(42))
expect_fail("stop() while not running", "", ljlog.stop())
assert(ljlog.running() == false)
-- And a good start after all those still works.
assert(ljlog.start({ file = "$T/api.ljlog", calls = true }))
assert(ljlog.running() == true)
expect_fail("start() while running", "", ljlog.start({ file = "$T/api.ljlog" }))
assert(ljlog.stop())
assert(ljlog.running() == false)
print("api done")
EOF
rc=0
luajit "$T/api.lua" >"$T/api.out" 2>"$T/api.err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/api.err"; fail "the Lua API checks failed (exit $rc)"; }
grep -q "^api done" "$T/api.out" || fail "the Lua API checks did not finish"
check_complete "$T/api.ljlog"
ok "Lua API: start with bad options, an unwritable file, a bad argument type, stop while not running and start while running return nil + message; a good start/stop after them gives a complete log"

# -- ljlog record with a bad option runs nothing --------------------------------

rc=0
ljlog record -o "$T/rec.ljlog" -e bogus -- "$LUAJIT" -e "io.open('$T/ran', 'w'):close()" \
	>"$T/rec.out" 2>"$T/rec.err" || rc=$?
expect_eq "ljlog record -e bogus: exit status" 2 "$rc"
[ -e "$T/ran" ] && fail "ljlog record -e bogus ran the program"
[ -e "$T/rec.ljlog" ] && fail "ljlog record -e bogus wrote a log"
grep -q bogus "$T/rec.err" || fail "ljlog record -e bogus: the message does not name 'bogus': $(cat "$T/rec.err")"
ok "ljlog record -e bogus: exit 2, names 'bogus', the program was not run"

# -- A LuaJIT the profiler was not built for ------------------------------------

mm=$top_builddir/tests/e2e/.libs/ljlog_mismatch.so
[ -f "$mm" ] || fail "the mismatch module is not built ($mm)"
mkdir "$T/mm"
ln -s "$mm" "$T/mm/ljlog.so"
running=$(luajit_plain -e 'io.write(jit.version)')
log=$T/mm.ljlog
rc=0
if [ -n "$LJLOG_TEST_PRELOAD" ]; then
	LUAJIT_PROFILE="log:file=$log" LUA_CPATH="$T/mm/?.so;;" timeout "$E2E_TIMEOUT" \
		env LD_PRELOAD="$LJLOG_TEST_PRELOAD" "$LUAJIT" -lljlog "$prog" >"$T/run.out" 2>"$T/run.err" || rc=$?
else
	LUAJIT_PROFILE="log:file=$log" LUA_CPATH="$T/mm/?.so;;" timeout "$E2E_TIMEOUT" \
		"$LUAJIT" -lljlog "$prog" >"$T/run.out" 2>"$T/run.err" || rc=$?
fi
unchanged "LuaJIT mismatch" "$T/run.err"
grep -qF "$running" "$T/run.err" || fail "LuaJIT mismatch: the message does not name the running '$running': $(cat "$T/run.err")"
grep -qF "LuaJIT 0.0.0-mismatch" "$T/run.err" || fail "LuaJIT mismatch: the message does not name the expected version: $(cat "$T/run.err")"
[ -e "$log" ] && fail "LuaJIT mismatch: a log was written"
ok "LuaJIT mismatch: one line naming '$running' and 'LuaJIT 0.0.0-mismatch'; unprofiled (JIT on, no log); output and status unchanged"

# -- Reading commands: not a log, an empty file, an unknown option ----------------

echo "hello, I am a text file, not a log" >"$T/text.txt"
: >"$T/empty.ljlog"
# one_line CMD...: run it (rc set), stderr must be one line.
one_line() {
	rc=0
	ljlog "$@" >"$T/cmd.out" 2>"$T/cmd.err" || rc=$?
	local lines
	lines=$(wc -l <"$T/cmd.err")
	[ "$lines" -eq 1 ] || { show "$T/cmd.err"; fail "ljlog $*: expected one line on stderr, got $lines"; }
}
for cmd in report "report --leaks" "report --json" top "top --once" folded "flame -o $T/o.html" \
	"export -f speedscope -o $T/o.json" "export -f chrome -o $T/o.json" "export -f pprof -o $T/o.pb" \
	"export -f heapsnapshot -o $T/o.hs" heap "heap --by type" dump check; do
	# shellcheck disable=SC2086
	one_line $cmd "$T/text.txt"
	expect_eq "ljlog $cmd text.txt: exit status" 3 "$rc"
	grep -q "is not an ljlog log" "$T/cmd.err" || fail "ljlog $cmd text.txt: $(cat "$T/cmd.err")"
	[ -s "$T/cmd.out" ] && { show "$T/cmd.out"; fail "ljlog $cmd text.txt: printed a report"; }
	# shellcheck disable=SC2086
	one_line $cmd "$T/empty.ljlog"
	expect_eq "ljlog $cmd empty.ljlog: exit status" 1 "$rc"
	grep -q "is empty: no log was written to it" "$T/cmd.err" || fail "ljlog $cmd empty.ljlog: $(cat "$T/cmd.err")"
	[ -s "$T/cmd.out" ] && { show "$T/cmd.out"; fail "ljlog $cmd empty.ljlog: printed a report"; }
	set -- "$T"/o.*
	[ -e "$1" ] && fail "ljlog $cmd: left $*"
done
ok "every reading command: a text file is one line and exit 3, an empty file one line and exit 1, no output"

for cmd in report top folded flame export dump check heap record; do
	rc=0
	ljlog $cmd --bogus-flag "$T/text.txt" >"$T/cmd.out" 2>"$T/cmd.err" || rc=$?
	expect_eq "ljlog $cmd --bogus-flag: exit status" 2 "$rc"
	expect_eq "ljlog $cmd --bogus-flag: stderr lines" 2 "$(wc -l <"$T/cmd.err")"
	grep -q -- "--bogus-flag" "$T/cmd.err" || fail "ljlog $cmd --bogus-flag: does not name it: $(cat "$T/cmd.err")"
	expect_eq "ljlog $cmd --bogus-flag: last line" "see 'ljlog $cmd --help'" "$(tail -n 1 "$T/cmd.err")"
done
ok "every command: an unknown option is one line naming it, then see 'ljlog CMD --help', exit 2"
