-- ljlog e2e: the program's own hook under ljlog's triggers.
-- luajit hookstress.lua ROUNDS [READY STOP [STARTED]]: ROUNDS rounds of 1,000,000
-- calls, each counted by the program's own debug.sethook call hook, with a
-- __gc finalizer and a GC step every 50,000 calls; the JIT on (the hook
-- aborts every trace that would hold a call: each call is seen). With
-- READY and STOP: writes READY when the rounds are done, then goes on
-- calling (and allocating) under the hook, without counting, until STOP
-- exists. With STARTED: writes it first (the modules of -l, ljlog's
-- among them, are loaded by then). Prints "calls N finalized F" (N: what the hook counted in the
-- rounds; F varies with the GC's pace and is not compared).
local rounds, ready, stop = tonumber(arg[1]) or 1, arg[2], arg[3]
if arg[4] then
	assert(io.open(arg[4], "w")):close()
end

local n, finalized = 0, 0
local function count()
	n = n + 1
end

local function collected()
	finalized = finalized + 1
end

local function leaf(x)
	return x + 1
end

local function step(i)
	local y = leaf(i)
	if i % 50000 == 0 then
		local p = newproxy(true)
		getmetatable(p).__gc = collected
		collectgarbage("step")
	end
	return y -- not a tail call: step's frame stays
end

local function exists(path)
	local f = io.open(path)
	if f then
		f:close()
	end
	return f ~= nil
end

local s = 0
for _ = 1, rounds do
	-- Set anew each round: an arm of ljlog's may meet the program's own
	-- debug.sethook.
	debug.sethook(count, "c")
	for i = 1, 1000000 do
		s = s + step(i)
	end
	debug.sethook()
end
local counted = n

if ready then
	local f = assert(io.open(ready, "w"))
	f:close()
	debug.sethook(count, "c")
	local i = 0
	while not exists(stop) do
		for _ = 1, 1000 do
			i = i + 1
			s = s + step(i)
		end
	end
	debug.sethook()
end
assert(s > 0)
print(string.format("calls %d finalized %d", counted, finalized))
