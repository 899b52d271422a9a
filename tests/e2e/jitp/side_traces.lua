-- ljlog differential corpus: side_traces.
-- Case: dispatch() loops with a data-dependent branch, i % 3 == 0 calls
-- heavy(), otherwise light(). The root trace follows one direction; the
-- guard of the other direction fails often enough that a side trace is
-- compiled for it (with -jv: a trace "(1/N)" from the loop). heavy() does
-- several times light()'s arithmetic per call, so although light() is
-- called twice as often, heavy() should take more of the time with the
-- JIT off; with the JIT on, both are inlined into the root and side traces.
-- No designed split.
-- Scale 1 (measured): about 0.48 s of CPU with the JIT on, 1.09 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local function heavy(s, i)
	local x = (s * 17 + i) % 65521
	x = (x * x + 3) % 65519
	x = (x * 13 + (x % 7) * (i % 5)) % 65497
	x = (x * x + i) % 65479
	x = (x * 11 + (x % 3)) % 65449
	return x
end

local function light(s, i)
	return (s + i * 7) % 65521
end

local function dispatch(n, s)
	for i = 1, n do
		if i % 3 == 0 then
			s = heavy(s, i)
		else
			s = light(s, i)
		end
	end
	return s
end

local rounds = math.max(1, math.floor(78 * SCALE + 0.5))
local s, total = 1, 0
for r = 1, rounds do
	s = dispatch(300000, (s + r) % 65521)
	total = total + s
end
print(string.format("side_traces rounds=%d total=%d", rounds, total))
