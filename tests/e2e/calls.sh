#!/usr/bin/env bash
# ljlog e2e: per-function call counts equal an independent count.
# calls.lua runs once under a debug.sethook counter (hookcount.lua, JIT off)
# and once under ljlog; every Lua function of calls.lua and a few library
# functions must have exactly the same number of calls in
# `ljlog report --json`, and the log has one coroutine per coroutine the
# hook saw created, plus the main one (calls_match in lib.sh).
. "$(dirname "$0")/lib.sh"

calls_match "$E2E/calls.lua" "calls,alloc,gc,buffer=4k"
ok "calls.lua under ljlog (calls,alloc,gc, 4k buffer): same output, complete log, exact counts"
calls_match "$E2E/calls.lua" "nodefaults,calls"
ok "calls.lua under ljlog (calls only): same output, complete log, exact counts"
