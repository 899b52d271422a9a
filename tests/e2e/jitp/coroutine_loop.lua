-- ljlog differential corpus: coroutine_loop.
-- Case: producer/consumer over a coroutine. producer() runs in a coroutine
-- and, for each item, computes it with make_item() (an inner loop) and
-- yields it; consume() runs on the main coroutine, resumes the producer in
-- a loop and digests each item with digest() (an inner loop). Work is on
-- both sides of the resume/yield switch; LuaJIT does not compile across
-- resume/yield, but the inner loops are compiled as loop traces.
-- No designed split; by construction make_item's loop has 60 iterations
-- per item and digest's 40 of a similar body, so roughly 60:40 between
-- them (plus whatever the profiler charges to producer/consume for the
-- switches).
-- Scale 1 (measured): about 0.49 s of CPU with the JIT on, 1.24 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local function make_item(i)
	local v = i
	for k = 1, 60 do
		v = (v * 29 + k) % 65521
	end
	return v
end

local function producer(count)
	for i = 1, count do
		local v = make_item(i)
		coroutine.yield(v)
	end
	return nil
end

local function digest(v, acc)
	for k = 1, 40 do
		acc = (acc * 31 + v + k) % 1000003
	end
	return acc
end

local function consume(count)
	local co = coroutine.create(producer)
	local acc = 0
	local ok, v = coroutine.resume(co, count)
	while v ~= nil do
		acc = digest(v, acc)
		ok, v = coroutine.resume(co)
	end
	assert(ok)
	return acc
end

local rounds = math.max(1, math.floor(35 * SCALE + 0.5))
local total = 0
for _ = 1, rounds do
	total = (total + consume(20000)) % 1000000007
end
print(string.format("coroutine_loop rounds=%d total=%d", rounds, total))
