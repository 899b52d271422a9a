-- ljlog differential corpus: split_table, a KNOWN 3:1 split (table work).
-- Case: fill_a() and fill_b() do the same table work: build a fresh table
-- keyed by N distinct strings (hash part), then read every key back and
-- sum the values. fill_a() does that 3 times per call (3 * N entries
-- inserted and read), fill_b() once (N entries), the same loops in the same
-- shape (an outer repetition loop of 3 vs 1), so the per-entry costs,
-- table sizes and garbage per entry are the same. The driver (main chunk)
-- calls them alternately and does almost nothing itself.
-- Expected: fill_a 75%, fill_b 25% of the samples whose innermost Lua
-- function is one of the two (GC steps run in whichever allocates, at the
-- same rate per entry).
-- Measured (os.clock, each function timed alone over 4000 calls, 2 cores,
-- Debian 12 LuaJIT 2.1; `luajit split_table.lua 4 [on|off] ratio`):
--   JIT on: 2.956-3.026, JIT off: 2.977-3.016 (5 runs each, quiet
--   machine; on a busy one, load average 5-6 on 2 cores, 10000 calls:
--   2.83-3.20, the GC-heavy work is the most sensitive to contention).
-- Scale 1 (measured): about 0.44 s of CPU with the JIT on, 0.49 s off.
-- Arguments: [SCALE [off [ratio]]]  (SCALE multiplies the work; off:
-- jit.off(); a third argument "ratio" times each function alone instead of
-- the normal run and prints the ratio of their CPU times).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local N = 2000
local KEYS = {}
for k = 1, N do
	KEYS[k] = string.format("key%05d", (k * 7919) % 100000)
end

local function fill_a(keys, n)
	local s = 0
	for r = 1, 3 do
		local t = {}
		for k = 1, n do
			t[keys[k]] = k + r
		end
		for k = n, 1, -1 do
			s = s + t[keys[k]]
		end
	end
	return s
end

local function fill_b(keys, n)
	local s = 0
	for r = 1, 1 do
		local t = {}
		for k = 1, n do
			t[keys[k]] = k + r
		end
		for k = n, 1, -1 do
			s = s + t[keys[k]]
		end
	end
	return s
end

if arg and arg[3] == "ratio" then
	local rounds = math.max(1, math.floor(1000 * SCALE + 0.5))
	local x = 0
	for _ = 1, 20 do
		x = x + fill_a(KEYS, N) + fill_b(KEYS, N)
	end
	local t0 = os.clock()
	for _ = 1, rounds do
		x = x + fill_a(KEYS, N)
	end
	local t1 = os.clock()
	for _ = 1, rounds do
		x = x + fill_b(KEYS, N)
	end
	local t2 = os.clock()
	print(string.format("split_table ratio A/B = %.3f (A %.3f s, B %.3f s, %d calls each) x=%d",
		(t1 - t0) / (t2 - t1), t1 - t0, t2 - t1, rounds, x))
	return
end

local rounds = math.max(1, math.floor(2500 * SCALE + 0.5))
local x = 0
for _ = 1, rounds do
	x = (x + fill_a(KEYS, N) + fill_b(KEYS, N)) % 1000000007
end
print(string.format("split_table rounds=%d x=%d", rounds, x))
