-- ljlog e2e: a program that runs until told to stop.
-- Arguments: STOPFILE [MAXSECONDS]. Calls work() in a loop until STOPFILE
-- exists (checked every batch of calls) or MAXSECONDS of CPU time (default
-- 30) have passed, then prints how many batches it ran.
local stop, max = ...
assert(stop, "usage: spin.lua STOPFILE [MAXSECONDS]")
max = tonumber(max) or 30

local function work(n)
	local s = 0
	for i = 1, n do
		s = s + i
	end
	return s
end

local function batch()
	local t = {}
	for i = 1, 200 do
		t[#t + 1] = work(50)
	end
	return t
end

local t0, batches = os.clock(), 0
while true do
	batch()
	batches = batches + 1
	local f = io.open(stop)
	if f then
		f:close()
		break
	end
	if os.clock() - t0 > max then
		break
	end
end
io.write(string.format("spin.lua ran %d batches\n", batches))
