-- ljlog differential corpus: split_jit, a KNOWN 3:1 split (JIT on in mind).
-- Case: heavy_a() and light_b() run the same loop body, a numeric
-- recurrence; heavy_a() does 3 * N iterations for every N of light_b().
-- The driver (main chunk) calls them alternately and does almost nothing
-- itself. Each has its own inner loop, so with the JIT on each loop is a
-- loop trace of its own (the driver's trace, if any, links to them), and
-- the 3:1 split holds whether or not the calls are inlined into the driver.
-- Expected: heavy_a 75%, light_b 25% of the samples whose innermost Lua
-- function is one of the two.
-- Measured (os.clock, each function timed alone over 400 calls, 2 cores,
-- Debian 12 LuaJIT 2.1; `luajit split_jit.lua 4 [on|off] ratio`):
--   JIT on: 2.989-3.014, JIT off: 2.980-3.005 (5 runs each; earlier
--   runs 2.970-3.105).
-- Scale 1 (measured): about 0.47 s of CPU with the JIT on, 1.19 s off.
-- Arguments: [SCALE [off [ratio]]]  (SCALE multiplies the work; off:
-- jit.off(); a third argument "ratio" times each function alone instead of
-- the normal run and prints the ratio of their CPU times).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local N = 100000

local function heavy_a(n, x)
	for k = 1, 3 * n do
		x = (x * 1103 + k) % 999331
	end
	return x
end

local function light_b(n, x)
	for k = 1, n do
		x = (x * 1103 + k) % 999331
	end
	return x
end

if arg and arg[3] == "ratio" then
	local rounds = math.max(1, math.floor(100 * SCALE + 0.5))
	local x = 1
	for _ = 1, 20 do
		x = light_b(N, heavy_a(N, x))
	end
	local t0 = os.clock()
	for _ = 1, rounds do
		x = heavy_a(N, x)
	end
	local t1 = os.clock()
	for _ = 1, rounds do
		x = light_b(N, x)
	end
	local t2 = os.clock()
	print(string.format("split_jit ratio A/B = %.3f (A %.3f s, B %.3f s, %d calls each) x=%d",
		(t1 - t0) / (t2 - t1), t1 - t0, t2 - t1, rounds, x))
	return
end

-- Rounds of different lengths (from 0.8 N to 1.2 N, the same sequence
-- every run), as in nested_split.lua: rounds of one length can repeat in
-- step with the kernel's tick, which places CPU-time samples. The split is
-- 3:1 in every round.
local rounds = math.max(1, math.floor(185 * SCALE + 0.5))
local x, seed = 1, 12345
for _ = 1, rounds do
	seed = (seed * 1103515245 + 12345) % 2147483648
	local n = N - N / 5 + seed % (2 * N / 5 + 1)
	x = heavy_a(n, x)
	x = light_b(n, x)
end
print(string.format("split_jit rounds=%d x=%d", rounds, x))
