#!/usr/bin/env bash
# ljlog e2e: calls that take unusual paths, counted exactly.
# Each program runs under the hook counter and under ljlog (calls_match in
# lib.sh): the output is unchanged, the log complete, the counts equal.
#   edge.lua        deep recursion, xpcall, C calling Lua, binary and
#                   source-named chunks, yield across pcall, coroutine
#                   errors, metamethods, iterators, varargs
#   deadco.lua      resuming a dead coroutine
#   finalizers.lua  __gc finalizers calling Lua and library functions
#   longname.lua    chunk names of hundreds and thousands of bytes
# overflow.lua (stack overflows under pcall) cannot be counted by a Lua
# hook; it must run unchanged, with a complete log and exact counts of the
# calls after the overflows. Every case runs; the test fails if any did.
. "$(dirname "$0")/lib.sh"

failed=
for prog in edge deadco finalizers longname; do
	if (calls_match "$E2E/$prog.lua" "calls,alloc,gc,buffer=4k"); then
		ok "$prog.lua: same output, complete log, exact counts"
	else
		failed="$failed $prog.lua"
	fi
done

overflow() {
	local prog=$E2E/overflow.lua rc=0
	luajit_plain "$prog" >"$T/ref.out" 2>&1 || fail "overflow.lua failed unprofiled"
	profile "file=$T/overflow.ljlog,calls,alloc,gc,buffer=4k" "$prog" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/err"; fail "overflow.lua: the profiled run exited with status $rc"; }
	cmp -s "$T/ref.out" "$T/out" || fail "overflow.lua: output '$(cat "$T/out")', unprofiled '$(cat "$T/ref.out")'"
	check_complete "$T/overflow.ljlog"
	report_json "$T/overflow.ljlog" "$T/r.json"
	local line n
	line=$(grep -n '^local function after' "$prog" | cut -d: -f1)
	n=$(sed -n 's/^overflow.lua after //p' "$T/out")
	expect_eq "overflow.lua: calls of after()" "$n" \
		"$(json_get "$T/r.json" "fn.get('$prog:$line', {}).get('calls')")"
}
if (overflow); then
	ok "overflow.lua: same output, complete log, exact count of the calls after the overflows"
else
	failed="$failed overflow.lua"
fi

[ -z "$failed" ] || fail "failed:$failed"
