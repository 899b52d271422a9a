#!/usr/bin/env bash
# ljlog e2e: a build without the sampler, as configure makes on machines
# other than x86_64 and aarch64 (--disable-sampler forces it here;
# scripts/test.sh builds build-nosampler/ for this test). The default set
# records gc and sampled alloc without a word; sample= says on stderr that
# sampling is not available on this machine and the program runs on with
# its other families; calls count exactly. Skips in builds with the sampler.
. "$(dirname "$0")/lib.sh"

grep -q '^#define LJLOG_SAMPLER 1' "$top_builddir/config.h" &&
	skip "built with the sampler (configure --disable-sampler builds without)"
case $(uname -m) in
x86_64 | aarch64) why="this ljlog was built without the sampler (configure --disable-sampler)" ;;
*) why="not available on this machine ($(uname -m)): ljlog's sampler reads LuaJIT's interpreter registers on x86_64 and aarch64 only (man ljlog, MACHINES)" ;;
esac
prog=$top_srcdir/examples/demo.lua
luajit_plain "$prog" >"$T/plain.out" 2>"$T/plain.err" ||
	{ show "$T/plain.err"; fail "the unprofiled run failed"; }

# The default set: no message, no samples, allocations and GC recorded.
profile "file=$T/d.ljlog" "$prog" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "[defaults] the profiled run failed"; }
[ ! -s "$T/err" ] || { show "$T/err"; fail "[defaults] messages on stderr"; }
cmp -s "$T/plain.out" "$T/out" || fail "[defaults] output differs from the unprofiled run"
check_complete "$T/d.ljlog"
report_json "$T/d.ljlog" "$T/d.json"
expect_eq "[defaults] samples" 0 "$(json_get "$T/d.json" 'd["samples"] + d["signals"]')"
[ "$(json_get "$T/d.json" 'd["heap"]["alloc_count"] > 0')" = true ] ||
	fail "[defaults] no allocations recorded: $(json_get "$T/d.json" 'd["heap"]')"
ok "[defaults] no message, no samples; allocations recorded"

# sample= named: one message that says why, the rest recorded.
profile "file=$T/s.ljlog,sample=1ms,alloc" "$prog" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "[sample] the profiled run failed"; }
cmp -s "$T/plain.out" "$T/out" || fail "[sample] output differs from the unprofiled run"
want="ljlog: sample: $why"
expect_eq "[sample] stderr" "$want" "$(cat "$T/err")"
check_complete "$T/s.ljlog"
report_json "$T/s.ljlog" "$T/s.json"
expect_eq "[sample] samples" 0 "$(json_get "$T/s.json" 'd["samples"] + d["signals"]')"
ok "[sample] '$want'; the log is complete"

# calls: the exact counts of the hook's count (calls_match, JIT off).
calls_match "$prog" calls
ok "calls: exact counts without the sampler"
