-- ljlog differential corpus: main_chunk, a KNOWN 3:1 split between the main
-- chunk and a function.
-- Case: most work sits in the main chunk itself (top-level code, no
-- enclosing function: keyed main_chunk.lua:0, linedefined 0), the rest in
-- helper(). Each round the main chunk runs 3 * N iterations of a loop and
-- helper() N iterations of the same body (its own loop, so with the JIT on
-- it is a loop trace of its own).
-- Expected: main chunk 75%, helper 25%.
-- Measured (os.clock around each part, interleaved, over the whole run;
-- `luajit main_chunk.lua 4 [on|off] ratio`), 5 runs each: JIT on
-- 2.991-3.004, JIT off 2.998-3.005.
-- Scale 1 (measured): about 0.44 s of CPU with the JIT on, 1.10 s off.
-- Arguments: [SCALE [off [ratio]]]  (SCALE multiplies the work; off:
-- jit.off(); a third argument "ratio" also times the two parts and prints
-- the ratio of their CPU times).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1
local timing = arg and arg[3] == "ratio"
local clock = os.clock

local N = 100000

local function helper(n, x)
	for k = 1, n do
		x = (x * 769 + k) % 999979
	end
	return x
end

local rounds = math.max(1, math.floor(170 * SCALE + 0.5))
local x, tmain, thelp = 1, 0, 0
for _ = 1, rounds do
	local t0 = timing and clock()
	for k = 1, 3 * N do
		x = (x * 769 + k) % 999979
	end
	local t1 = timing and clock()
	x = helper(N, x)
	if timing then
		local t2 = clock()
		tmain, thelp = tmain + (t1 - t0), thelp + (t2 - t1)
	end
end
if timing then
	print(string.format("main_chunk ratio main/helper = %.3f (main %.3f s, helper %.3f s)",
		tmain / thelp, tmain, thelp))
end
print(string.format("main_chunk rounds=%d x=%d", rounds, x))
