-- ljlog differential corpus: nested_split, a KNOWN 1:2:3 split by nesting.
-- Case: outer() runs its own loop of N iterations, then calls middle(),
-- which runs 2 * N iterations of the same body and then calls inner(),
-- which runs 3 * N. The calls are not tail calls (each caller keeps its
-- frame), so the stack is outer > middle > inner while inner works: a
-- profiler must charge each sample to the innermost function, not to the
-- callers. Each loop is a loop trace of its own with the JIT on.
-- Expected (innermost Lua function): outer 1/6 (16.7%), middle 2/6
-- (33.3%), inner 3/6 (50%).
-- Measured (os.clock; `luajit nested_split.lua 4 [on|off] ratio`: inner
-- timed alone, middle and outer timed with their callees and the callees'
-- time subtracted), 5 runs each: JIT on outer 16.4-17.2%, middle
-- 33.0-33.5%, inner 49.5-50.4%; JIT off outer 15.7-17.4%, middle
-- 32.6-33.5%, inner 49.4-50.8%.
-- Scale 1 (measured): about 0.48 s of CPU with the JIT on, 1.21 s off.
-- Arguments: [SCALE [off [ratio]]]  (SCALE multiplies the work; off:
-- jit.off(); a third argument "ratio" measures the self-times instead of
-- the normal run and prints them as shares).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local N = 50000

local function inner(n, x)
	for k = 1, 3 * n do
		x = (x * 613 + k) % 999983
	end
	return x
end

local function middle(n, x)
	for k = 1, 2 * n do
		x = (x * 613 + k) % 999983
	end
	local r = inner(n, x)
	return r
end

local function outer(n, x)
	for k = 1, n do
		x = (x * 613 + k) % 999983
	end
	local r = middle(n, x)
	return r
end

if arg and arg[3] == "ratio" then
	local rounds = math.max(1, math.floor(100 * SCALE + 0.5))
	local x = 1
	for _ = 1, 20 do
		x = outer(N, x)
	end
	local function timed(f)
		local t0 = os.clock()
		for _ = 1, rounds do
			x = f(N, x)
		end
		return os.clock() - t0
	end
	local ti, tm, to = timed(inner), timed(middle), timed(outer)
	local si, sm, so = ti, tm - ti, to - tm
	local tot = si + sm + so
	print(string.format("nested_split self shares outer %.1f%% middle %.1f%% inner %.1f%% (ratios %.3f : %.3f : 3) x=%d",
		100 * so / tot, 100 * sm / tot, 100 * si / tot, 3 * so / si, 3 * sm / si, x))
	return
end

-- Rounds of different lengths (from 0.8 N to 1.2 N, the same sequence
-- every run): rounds of one length (2 ms here) can repeat in step with the
-- kernel's tick (4 ms at 250 Hz), which places CPU-time samples, and then
-- every sample falls at the same point of a round (man ljlog, sample). The
-- split is 1:2:3 in every round.
local rounds = math.max(1, math.floor(250 * SCALE + 0.5))
local x, seed = 1, 12345
for _ = 1, rounds do
	seed = (seed * 1103515245 + 12345) % 2147483648
	x = outer(N - N / 5 + seed % (2 * N / 5 + 1), x)
end
print(string.format("nested_split rounds=%d x=%d", rounds, x))
