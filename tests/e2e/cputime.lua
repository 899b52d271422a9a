-- ljlog e2e: CPU time known on our own. Spins for SECONDS of this thread's
-- CPU time (default 1) and prints the thread's CPU time in ns, read with
-- clock_gettime(CLOCK_THREAD_CPUTIME_ID) at the end: what a profiler
-- sampling this thread's CPU time should account for.
local ffi = require("ffi")
ffi.cdef [[
struct ljlog_ts { long sec, nsec; };
int clock_gettime(int clk, struct ljlog_ts *ts);
]]
local CLOCK_THREAD_CPUTIME_ID = 3
local ts = ffi.new("struct ljlog_ts")
local function now()
	assert(ffi.C.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts) == 0)
	return tonumber(ts.sec) * 1e9 + tonumber(ts.nsec)
end

local function work(n)
	local s = 0
	for i = 1, n do
		s = (s * 31 + i) % 1000003
	end
	return s
end

local want, acc = (tonumber(arg[1]) or 1) * 1e9, 0
while now() < want do
	acc = acc + work(100000)
end
print(string.format("%d", now()), acc)
