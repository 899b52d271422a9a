#!/usr/bin/env bash
# ljlog e2e: the module's shared object is unloaded (lua_close's finalizer
# of package's handle dlcloses it) while ljlog's hooks, wrapper and allocator
# still point into it. The host must not crash, and the log must be complete.
. "$(dirname "$0")/lib.sh"

unload=$top_builddir/tests/e2e/unload
log=$T/unload.ljlog
rc=0
env ${LJLOG_TEST_PRELOAD:+LD_PRELOAD=$LJLOG_TEST_PRELOAD} \
	timeout "$E2E_TIMEOUT" "$unload" "$MODDIR/ljlog.so" "$MODDIR" "$log" \
	>"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "the host exited with status $rc (139 = the unloaded code ran)"; }
expect_eq "the host's output" closed "$(cat "$T/out")"
check_complete "$log"
ok "module unloaded under its own hooks: host ran to the end, log complete"
