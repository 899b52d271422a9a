-- ljlog e2e trap: samples while traces are recorded, compiled and thrown
-- away: jit.flush() in a loop while hot loops (and their side traces) are
-- recompiled, some loops aborting (an inner loop, a coroutine switch).
-- Argument: ROUNDS.
local rounds = assert(tonumber(arg[1]), "usage: ROUNDS")

local function hot(n)
	local s = 0
	for i = 1, n do
		if i % 3 == 0 then
			s = s + i
		elseif i % 5 == 0 then
			s = s - 1
		else
			s = s + 0.5
		end
	end
	return s
end

local function nested(n)
	local s = 0
	for i = 1, n do
		for j = 1, 3 do
			s = s + i * j
		end
	end
	return s
end

local co = coroutine.wrap(function()
	while true do
		coroutine.yield(1)
	end
end)
local function switchy(n)
	local s = 0
	for _ = 1, n do
		s = s + co()
	end
	return s
end

local total = 0
for r = 1, rounds do
	total = total + hot(3000 + r % 50) + nested(500) + switchy(200)
	jit.flush()
end
print(total)
