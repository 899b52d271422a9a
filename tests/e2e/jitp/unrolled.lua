-- ljlog differential corpus: unrolled.
-- Case: weigh() runs a hot outer loop whose body holds a short fixed-count
-- inner loop (for k = 1, 2) that LuaJIT unrolls into the outer loop's
-- trace instead of compiling it as a loop of its own (with -jv: the root
-- traces tried at the inner loop abort, "leaving loop in root trace", and
-- the first trace compiled is the outer loop's, with the inner loop
-- unrolled: 40 runs out of 40; with a count of 3 it was 34 out of 40, and
-- with 4 the inner loop usually gets a trace of its own. LuaJIT
-- randomizes its retry penalties, so this is not fully deterministic). A second function,
-- smooth(), runs an ordinary single loop of its own afterwards each round.
-- No designed split. Both run the same iteration count per round; weigh()
-- has more operations per iteration. Measured with jit.p: about 50/50
-- with the JIT on, about 70/30 (weigh/smooth) with the JIT off.
-- Scale 1 (measured): about 0.49 s of CPU with the JIT on, 1.66 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local coef = { 3, 5 }

local function weigh(n, acc)
	local c = coef
	for i = 1, n do
		local v = 0
		for k = 1, 2 do
			v = v + c[k] * ((i + k) % 7) + (i * k) % 5
		end
		acc = (acc + v) % 1000003
	end
	return acc
end

local function smooth(n, acc)
	for i = 1, n do
		acc = (acc * 5 + i % 11) % 1000033
	end
	return acc
end

local rounds = math.max(1, math.floor(75 * SCALE + 0.5))
local a, b = 0, 0
for _ = 1, rounds do
	a = weigh(400000, a)
	b = smooth(400000, b)
end
print(string.format("unrolled rounds=%d a=%d b=%d", rounds, a, b))
