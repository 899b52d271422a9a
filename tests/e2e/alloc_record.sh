#!/usr/bin/env bash
# ljlog e2e: with alloc, ljlog attaches a handler for LuaJIT's record
# events (it gives a snapshot per line only to the traces that may
# allocate). LuaJIT keeps one handler per event: a program's own, attached
# before ljlog.start, must still see every record event while ljlog runs
# (as many as without ljlog, the ground truth) and be back in LuaJIT's
# registry after ljlog.stop(). Meanwhile the traces that allocate have
# checks (IR PROF) and the others none.
. "$(dirname "$0")/lib.sh"

prog=$E2E/alloc_record.lua
luajit "$prog" - >"$T/plain.out" 2>"$T/plain.err" ||
	{ show "$T/plain.err"; fail "the run without ljlog failed"; }
luajit "$prog" "$T/r.ljlog" >"$T/on.out" 2>"$T/on.err" ||
	{ show "$T/on.err"; fail "the run with ljlog failed"; }
check_complete "$T/r.ljlog"
read -r want back0 _ _ ok0 <"$T/plain.out" || fail "no output without ljlog"
read -r got back pa pn ok1 <"$T/on.out" || fail "no output with ljlog"
[ "$ok0 $ok1 $back0" = "true true true" ] || { show "$T/plain.out"; show "$T/on.out"; fail "the program did not finish"; }
[ "$want" -gt 0 ] || fail "the program's record handler saw nothing without ljlog ($want)"
expect_eq "record events the program's handler saw while ljlog ran" "$want" "$got"
expect_eq "the program's record handler back after ljlog.stop()" true "$back"
[ "$pa" -gt 0 ] || fail "no IR PROF in the traces that allocate ($pa)"
expect_eq "IR PROF in the traces that allocate nothing" 0 "$pn"
grep -q 'replaced' "$T/on.err" && { show "$T/on.err"; fail "ljlog said its handler was replaced"; }
ok "the program's record handler saw all $got events and is back; $pa PROF where traces allocate, none elsewhere"
