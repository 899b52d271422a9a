-- ljlog e2e: the sysbench test script of hosts.sh (sysbench 1.0.20:
-- `sysbench hosts_sysbench.lua --threads=2 --events=N --time=0 run`).
-- sysbench loads it into one LuaJIT VM per worker thread and one for the
-- main thread. Each event is CPU-bound Lua through functions defined here
-- at load time, and C library functions that stay C calls with the JIT on
-- (table.sort with a Lua comparator, string.gsub):
--   work()      global, called once per event
--   fib(n)      local, recursive: fib(FIB_N) makes 2*fib(FIB_N+1)-1 calls
--   M.step(i)   a table's field, called STEPS times per event
--   less(a, b)  local, table.sort's comparator
-- hosts.sh computes the calls from these constants (keep them in step).
-- Output: one identical line per worker thread, so that the output does
-- not depend on how the events were shared between the threads.
local FIB_N = 15 -- fib(16) = 987: 1973 calls of fib per event
local STEPS = 4 -- M.step calls per event
local LEN = 40 -- numbers sorted per step

local M = {}

local function fib(n)
	if n < 2 then
		return n
	end
	return fib(n - 1) + fib(n - 2)
end

local function less(a, b)
	return a > b
end

-- Sort LEN pseudo-random numbers (Park-Miller, exact in doubles) seeded
-- by i, descending; 1 if sorted and gsub replaced all of them, else 0.
function M.step(i)
	local t, x = {}, i
	for k = 1, LEN do
		x = (x * 16807) % 2147483647
		t[k] = x % 1000
	end
	table.sort(t, less)
	local _, n = string.gsub(table.concat(t, " "), "%d+", "#")
	local good = n == LEN and 1 or 0
	for k = 2, LEN do
		if t[k - 1] < t[k] then
			good = 0
		end
	end
	return good
end

function work()
	local r = fib(FIB_N)
	for i = 1, STEPS do
		r = r + M.step(i)
	end
	return r
end

local want = 610 + STEPS -- fib(15) and every step good
local bad = 0

function event()
	if work() ~= want then
		bad = bad + 1
	end
end

-- One io.write of the whole line: print writes the text and its newline
-- apart, and two threads' lines could interleave.
function thread_done()
	io.write(bad == 0 and "hosts_sysbench: thread done, every result right\n"
		or ("hosts_sysbench: thread done, " .. bad .. " results wrong\n"))
end
