-- ljlog e2e: one thread's workload in the C host (host --threads N).
-- Arguments: K (the thread's index, 1..N). Thread K runs its own chunk
-- "=threadK" so that its functions have names no other VM shares:
--   threadK:0  the chunk            called once
--   threadK:2  work(times)          called K times
--   threadK:1  leaf                 called K * 1000 times in all
-- and calls shared() in this file K * 100 times (summed over the VMs by
-- the reader), and allocates K * 500 small tables.
local k = assert(tonumber((...)), "usage: thread.lua K")

local src = "local function leaf(x) return x + 1 end\n"
	.. "return function(times) local s = 0 for i = 1, times do s = leaf(s) end return s end\n"
local work = assert(load(src, "=thread" .. k))()
for _ = 1, k do
	assert(work(1000) == 1000)
end

local function shared(x)
	return x * 2
end
for i = 1, k * 100 do
	shared(i)
end

local t = {}
for i = 1, k * 500 do
	t[i] = { i, tostring(i) }
end
t = nil
collectgarbage()
