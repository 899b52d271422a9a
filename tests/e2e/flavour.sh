#!/usr/bin/env bash
# ljlog e2e: the LuaJIT flavour (man ljlog "PROFILER OPTIONS", last
# paragraph). OpenResty's LuaJIT (Debian's luajit2, unpacked privately by
# scripts/setup-tools.sh into tests/tools/luajit2) says the same version as
# LuaJIT's but lays out some structures its own way: ljlog built for the
# other flavour must refuse it with a message naming both, write no log, and
# the program must run to its normal end with the same output as unprofiled.
# Each build checks its own module against the other flavour's VM, so the
# luajit build (build/) and the luajit2 build (build-lj2/, scripts/test.sh)
# together check both directions.
. "$(dirname "$0")/lib.sh"

flavour_of() { env -u LUA_PATH "$1" -e 'print(jit.prngstate and "openresty" or "luajit")'; }
mine=$(flavour_of "$LUAJIT")
lj2=$top_srcdir/tests/tools/luajit2/usr/bin/luajit
case $mine in
luajit)
	[ -x "$lj2" ] || skip "no $lj2: run scripts/setup-tools.sh (it unpacks Debian's luajit2)"
	other=$lj2 want="this program runs OpenResty's LuaJIT"
	;;
*)
	other=$(type -P luajit) || skip "no luajit (LuaJIT's own) on PATH"
	other=$(readlink -f "$other")
	want="this program runs LuaJIT '"
	;;
esac
! foreign "$other" || skip "$other is an $(uname -m) program and ljlog is built for another machine"
flavour=$(flavour_of "$other")
[ "$flavour" != "$mine" ] || skip "$LUAJIT ($mine) and $other ($flavour) are the same flavour"

prog=$E2E/outputs.lua
env -u LUA_PATH "$other" "$prog" 500 >"$T/plain.out" 2>&1 || fail "$other $prog failed unprofiled"
rc=0
(
	unset LUA_PATH
	LUAJIT=$other profile "file=$T/x.ljlog,calls,sample" "$prog" 500
) >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "the program exited with status $rc under the other flavour"; }
cmp -s "$T/plain.out" "$T/out" || fail "the output differs: '$(head -c 200 "$T/out")'"
grep -qF "LuaJIT mismatch: $want" "$T/err" ||
	{ show "$T/err"; fail "no message 'LuaJIT mismatch: $want'"; }
[ "$(grep -c mismatch "$T/err")" -eq 1 ] || { show "$T/err"; fail "want one message"; }
[ ! -e "$T/x.ljlog" ] || fail "a log was written for a LuaJIT of the other flavour"
ok "ljlog built for $mine refuses $flavour's LuaJIT with one message; the program runs unprofiled"
