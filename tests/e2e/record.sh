#!/usr/bin/env bash
# ljlog e2e: `ljlog record` profiles an unmodified program and passes its
# exit status through; a program that is not LuaJIT (no VM profiled) is
# one line and exit 125 (its own status when it failed); a log it cannot write is refused before the
# program runs (exit 2).
. "$(dirname "$0")/lib.sh"

# A program that prints its arguments, calls hop() once per argument
# character, and exits with status 3.
cat >"$T/prog.lua" <<'EOF'
local function hop(c)
	return c:byte()
end
local n = 0
for _, a in ipairs(arg) do
	for c in a:gmatch(".") do
		hop(c)
		n = n + 1
	end
end
io.write(table.concat(arg, " "), "\n", n, "\n")
io.stdout:flush()
os.exit(3)
EOF

run=("$LUAJIT")
[ -n "$LJLOG_TEST_PRELOAD" ] && run=(env LD_PRELOAD="$LJLOG_TEST_PRELOAD" "$LUAJIT")

rc=0
ljlog record -o "$T/rec.ljlog" -e calls -- "${run[@]}" "$T/prog.lua" alpha "be ta" gamma \
	>"$T/out" 2>"$T/err" || rc=$?
expect_eq "ljlog record: exit status of a program that exits 3" 3 "$rc"
expect_eq "ljlog record: the program's arguments" "alpha be ta gamma" "$(head -n 1 "$T/out")"
hops=$(sed -n 2p "$T/out")
check_complete "$T/rec.ljlog"
report_json "$T/rec.ljlog" "$T/r.json"
expect_eq "ljlog record: hop() calls" "$hops" \
	"$(json_get "$T/r.json" "fn.get('$T/prog.lua:1', {}).get('calls')")"
expect_eq "ljlog record: the main chunk's calls" 1 \
	"$(json_get "$T/r.json" "fn.get('$T/prog.lua:0', {}).get('calls')")"
ok "ljlog record -e calls: complete log, hop() called $hops times, exit status 3 passed through"

# Exit status 0 passes through too, -e alloc records allocations, and %p
# in the file name is the pid of the profiled process.
rc=0
ljlog record -o "$T/rec2-%p.ljlog" -e nodefaults,alloc -- "${run[@]}" -e 'local t = {} for i = 1, 1000 do t[i] = {} end' \
	>"$T/out" 2>"$T/err" || rc=$?
expect_eq "ljlog record: exit status of a program that ends normally" 0 "$rc"
set -- "$T"/rec2-*.ljlog
[ $# -eq 1 ] && [ -f "$1" ] || fail "ljlog record -o rec2-%p.ljlog: expected one log, got: $*"
rec2=$1
pid=${rec2##*/rec2-}
pid=${pid%.ljlog}
check_complete "$rec2"
report_json "$rec2" "$T/r.json"
expect_eq "ljlog record -o rec2-%p.ljlog: the pid in the name is the INTRO pid" "$pid" \
	"$(json_get "$T/r.json" 'd["pid"]')"
[ "$(json_get "$T/r.json" 'd["heap"]["alloc_count"] >= 1000')" = true ] ||
	fail "ljlog record -e nodefaults,alloc: fewer than 1000 allocations: $(json_get "$T/r.json" 'd["heap"]')"
expect_eq "ljlog record -e nodefaults,alloc: calls recorded" false \
	"$(json_get "$T/r.json" 'd["recorded"]["calls"] or any(f["calls"] is not None for f in d["functions"])')"
ok "ljlog record -e nodefaults,alloc -o rec2-%p.ljlog: exit 0 passed through, allocations and no calls, %p = pid $pid"

# No LuaJIT VM: a program that never runs luajit, and PUC Lua 5.1.
for prog in "true" "lua5.1 -e print(1)"; do
	# shellcheck disable=SC2086
	set -- $prog
	command -v "$1" >/dev/null || { echo "skip: $1 is not installed"; continue; }
	# PUC Lua loads the module through LUA_INIT: a sanitized module in a
	# program without the sanitizer's runtime aborts (not ljlog's doing).
	if [ "$1" = lua5.1 ] && [ -n "$LJLOG_TEST_PRELOAD" ]; then
		echo "skip: $prog under a sanitizer (its runtime is not in lua5.1)"
		continue
	fi
	if [ "$1" = lua5.1 ] && foreign lua5.1; then
		echo "skip: $prog: lua5.1 is an $(uname -m) program and the module is built for another machine"
		continue
	fi
	rm -f "$T/novm.ljlog"
	rc=0
	ljlog record -o "$T/novm.ljlog" -e calls -- "$@" >"$T/out" 2>"$T/err" || rc=$?
	expect_eq "ljlog record -- $prog: exit status" 125 "$rc"
	expect_eq "ljlog record -- $prog: stderr" \
		"ljlog record: no LuaJIT VM was profiled (is PROGRAM a LuaJIT program?)" "$(cat "$T/err")"
	ok "ljlog record -- $prog: 'no LuaJIT VM was profiled', exit 125"
done
# A program that fails without a VM keeps its status, with the message.
rc=0
ljlog record -o "$T/novm.ljlog" -- sh -c 'exit 5' >"$T/out" 2>"$T/err" || rc=$?
expect_eq "ljlog record -- sh -c 'exit 5': exit status" 5 "$rc"
grep -q "no LuaJIT VM was profiled" "$T/err" || { show "$T/err"; fail "exit 5, no VM: no message"; }
ok "ljlog record -- sh -c 'exit 5': the message, and the program's status 5"
# A log left empty (no INTRO block): no VM either.
printf '#!/bin/sh\n: >"$1"\n' >"$T/touch.sh"
chmod +x "$T/touch.sh"
rc=0
ljlog record -o "$T/novm.ljlog" -- "$T/touch.sh" "$T/novm.ljlog" >"$T/out" 2>"$T/err" || rc=$?
expect_eq "ljlog record of a program that leaves an empty log: exit status" 125 "$rc"
grep -q "no LuaJIT VM was profiled" "$T/err" || { show "$T/err"; fail "empty log: no message"; }
ok "ljlog record: an empty log (no INTRO block) is no VM profiled, exit 125"
# A complete log of an earlier run, under the name of a run that profiles
# nothing: that run's log is not it (it said "log written to" the old
# file, issue 38).
ljlog record -o "$T/old.ljlog" -- "${run[@]}" -e 'print(1)' >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "ljlog record -- luajit -e: failed"; }
check_complete "$T/old.ljlog"
cp "$T/old.ljlog" "$T/old.copy"
rc=0
ljlog record -o "$T/old.ljlog" -- true >"$T/out" 2>"$T/err" || rc=$?
expect_eq "ljlog record -o EXISTING -- true: exit status" 125 "$rc"
expect_eq "ljlog record -o EXISTING -- true: stderr" \
	"ljlog record: no LuaJIT VM was profiled (is PROGRAM a LuaJIT program?)" "$(cat "$T/err")"
cmp -s "$T/old.ljlog" "$T/old.copy" || fail "ljlog record -o EXISTING -- true changed the old log"
ok "ljlog record -o EXISTING -- true: no VM profiled, exit 125, not 'log written' of the old log"

# A log that cannot be written: refused before the program runs.
for out in /nonexistent/dir/x.ljlog "$T"; do
	rm -f "$T/ran"
	rc=0
	ljlog record -o "$out" -- "${run[@]}" -e "io.open('$T/ran', 'w'):close()" >"$T/out" 2>"$T/err" || rc=$?
	expect_eq "ljlog record -o $out: exit status" 2 "$rc"
	[ -e "$T/ran" ] && fail "ljlog record -o $out: the program ran"
	expect_eq "ljlog record -o $out: stderr lines" 1 "$(wc -l <"$T/err")"
	grep -qF "cannot write the log $out" "$T/err" || { show "$T/err"; fail "ljlog record -o $out: message"; }
	ok "ljlog record -o $out: '$(cat "$T/err")', exit 2, the program not run"
done

# A comma (and a backslash) in the log's name (issue 38, 10: "unknown
# option" with no way to write it): record -o takes the name as it is;
# LUAJIT_PROFILE writes the comma "\,".
name='a,b\c.ljlog'
rm -f "$T/$name"
ljlog record -o "$T/$name" -e calls -- "${run[@]}" -e "local x = 1" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "ljlog record -o '$name' failed"; }
check_complete "$T/$name"
ljlog report --json "$T/$name" | grep -q '"calls"' || fail "ljlog record -o '$name': no calls in the log"
rm -f "$T/c,d.ljlog"
profile "file=$T/c\\,d.ljlog,calls" -e "local x = 1" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "file=...c\\,d.ljlog failed"; }
! grep -q "option" "$T/err" || { show "$T/err"; fail "file=...c\\,d.ljlog: a message about options"; }
check_complete "$T/c,d.ljlog"
ok "a comma in the log's name: record -o '$name', and file=c\\,d.ljlog"
