-- ljlog e2e: trace events. A hot loop (compiled, with side traces for a
-- frequent and a rare branch), a loop the JIT cannot compile (a closure
-- made in it: NYI, the trace aborts), and jit.flush() between rounds.
-- Argument: ROUNDS.
local rounds = assert(tonumber(arg[1]), "usage: ROUNDS")

local function hot(n)
	local s = 0
	for i = 1, n do -- HOT LOOP
		if i % 4 == 0 then
			s = s + 1
		end
		if i % 5000 == 0 then
			s = s - 3
		end
		s = s + i % 7
	end
	return s
end

local function nyi(n)
	local s = 0
	for i = 1, n do
		local get = function() -- NYI: closure creation aborts the trace
			return i
		end
		s = s + get()
	end
	return s
end

local total = 0
for _ = 1, rounds do
	total = total + nyi(2000) + hot(2000000)
	jit.flush()
end
print(total)
