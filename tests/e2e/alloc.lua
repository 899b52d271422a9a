-- ljlog e2e: allocate and free a lot, stop the profiler, print the heap.
-- Run with LUAJIT_PROFILE set (luajit -lljlog): the profiler is attached
-- when this starts. Prints LuaJIT's own count of live heap bytes taken
-- right after ljlog.stop() (collectgarbage("count") is total / 1024 as a
-- double, so * 1024 is exact).
local ljlog = require("ljlog")
assert(ljlog.running(), "alloc.lua expects to start profiled")

local keep = {}
local function churn(round)
	local t = {}
	for i = 1, 2000 do
		-- Strings, tables that grow (reallocations), closures.
		t[i] = { tostring(i * round), string.rep("ab", i % 50) }
		if i % 3 == 0 then
			t[i][3] = function()
				return i + round
			end
		end
	end
	-- Keep a little, drop the rest.
	keep[#keep + 1] = t[round % 2000 + 1]
	local big = {}
	for i = 1, 5000 do
		big[#big + 1] = i
	end
	-- Coroutines (their stacks) come and go too.
	for i = 1, 20 do
		local co = coroutine.wrap(function(a)
			local s = string.rep("c", a)
			coroutine.yield(#s)
			return a
		end)
		co(i * 10)
	end
	if round % 4 == 0 then
		collectgarbage()
	else
		collectgarbage("step", 50)
	end
end

for round = 1, 40 do
	churn(round)
end
keep = nil
collectgarbage()
collectgarbage()

local ok, err = ljlog.stop()
local live = collectgarbage("count") * 1024
assert(ok, err)
io.write(string.format("%d\n", live))
