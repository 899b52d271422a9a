-- ljlog e2e: many coroutines, most dropped while suspended and freed by
-- the GC while the profiler runs (their frames still open in the log).
-- Arguments: INDEX OUT [N]. Coroutine i runs body(i), which calls step()
-- i % 5 times, yielding in each; it is resumed i % 3 times, then dropped.
-- The program counts its own calls (and the coroutines that ran, plus the
-- main one); OUT gets "name count" lines.
local _, out, n = ...
n = tonumber(n) or 5000
assert(out, "usage: coroutines.lua INDEX OUT [N]")

local BODY, STEP, RAN, RESUME = 0, 0, 0, 0

local function step(j)
	STEP = STEP + 1
	coroutine.yield(j)
end

local function body(i)
	BODY = BODY + 1
	for j = 1, i % 5 do
		step(j)
	end
	return i
end

for i = 1, n do
	local co = coroutine.create(body)
	for k = 1, i % 3 do
		if coroutine.status(co) == "dead" then
			break
		end
		if k == 1 then
			RAN = RAN + 1
		end
		RESUME = RESUME + 1
		assert(coroutine.resume(co, i))
	end
	co = nil
	if i % 200 == 0 then
		collectgarbage()
	end
end
collectgarbage()

local fh = assert(io.open(out, "w"))
fh:write(string.format("body %d\nstep %d\ncoroutine.yield %d\ncoroutine.resume %d\ncoroutines %d\n",
	BODY, STEP, STEP, RESUME, 1 + RAN))
fh:close()
