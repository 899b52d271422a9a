#!/usr/bin/env bash
# ljlog e2e: the LuaJIT flavour (man ljlog "PROFILER OPTIONS", last
# paragraph). OpenResty's LuaJIT (Debian's luajit2, unpacked privately by
# scripts/setup-tools.sh into tests/tools/luajit2) says the same version as
# LuaJIT's but lays out some structures its own way: ljlog built for the
# other flavour must refuse it with a message naming both, write no log, and
# the program must run to its normal end with the same output as unprofiled.
. "$(dirname "$0")/lib.sh"

lj2=$top_srcdir/tests/tools/luajit2/usr/bin/luajit
[ -x "$lj2" ] || skip "no $lj2: run scripts/setup-tools.sh (it unpacks Debian's luajit2)"
flavour=$("$lj2" -e 'print(jit.prngstate and "openresty" or "luajit")')
mine=$(LUA_CPATH="$MODDIR/?.so;;" "$LUAJIT" -e 'print(jit.prngstate and "openresty" or "luajit")')
[ "$flavour" != "$mine" ] || skip "luajit ($mine) and $lj2 ($flavour) are the same flavour"

prog=$E2E/outputs.lua
"$lj2" "$prog" 500 >"$T/plain.out" 2>&1 || fail "$lj2 $prog failed unprofiled"
rc=0
LUAJIT=$lj2 profile "file=$T/x.ljlog,calls,sample" "$prog" 500 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "the program exited with status $rc under the other flavour"; }
cmp -s "$T/plain.out" "$T/out" || fail "the output differs: '$(head -c 200 "$T/out")'"
grep -q "LuaJIT mismatch: this program runs OpenResty's LuaJIT" "$T/err" ||
	{ show "$T/err"; fail "no message naming OpenResty's LuaJIT"; }
[ "$(grep -c mismatch "$T/err")" -eq 1 ] || { show "$T/err"; fail "want one message"; }
[ ! -e "$T/x.ljlog" ] || fail "a log was written for a LuaJIT of the other flavour"
ok "ljlog built for $mine refuses $flavour's LuaJIT with one message; the program runs unprofiled"
