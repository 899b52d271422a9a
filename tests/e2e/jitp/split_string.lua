-- ljlog differential corpus: split_string, a KNOWN 3:1 split (string work).
-- Case: words_a() and words_b() do the same string work per step: format a
-- fresh string from the step and a call counter (string.format and `..`,
-- so every string is new: allocated, hashed, interned, later collected),
-- then read it back with string.sub, string.byte and #. words_a() does 3
-- repetitions of N steps per call, words_b() one (the same loops in the
-- same shape). The driver (main chunk) calls them alternately and does
-- almost nothing itself.
-- Expected: words_a 75%, words_b 25% of the samples whose innermost Lua
-- function is one of the two.
-- Measured (os.clock, each function timed alone over 2000 calls, 2 cores,
-- Debian 12 LuaJIT 2.1; `luajit split_string.lua 4 [on|off] ratio`):
--   JIT on: 2.987-3.028, JIT off: 2.980-3.031 (5 runs each).
-- Scale 1 (measured): about 0.46 s of CPU with the JIT on, 1.65 s off.
-- Arguments: [SCALE [off [ratio]]]  (SCALE multiplies the work; off:
-- jit.off(); a third argument "ratio" times each function alone instead of
-- the normal run and prints the ratio of their CPU times).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local format, sub, byte = string.format, string.sub, string.byte
local N = 1000
local calls = 0

local function words_a(n)
	local h = 0
	for r = 1, 3 do
		calls = calls + 1
		local c = calls
		for k = 1, n do
			local w = format("w%06d.", k) .. c
			local tail = sub(w, 2, 7)
			h = (h * 7 + byte(tail, 6) + #w) % 1000003
		end
	end
	return h
end

local function words_b(n)
	local h = 0
	for r = 1, 1 do
		calls = calls + 1
		local c = calls
		for k = 1, n do
			local w = format("w%06d.", k) .. c
			local tail = sub(w, 2, 7)
			h = (h * 7 + byte(tail, 6) + #w) % 1000003
		end
	end
	return h
end

if arg and arg[3] == "ratio" then
	local rounds = math.max(1, math.floor(500 * SCALE + 0.5))
	local x = 0
	for _ = 1, 50 do
		x = x + words_a(N) + words_b(N)
	end
	local t0 = os.clock()
	for _ = 1, rounds do
		x = x + words_a(N)
	end
	local t1 = os.clock()
	for _ = 1, rounds do
		x = x + words_b(N)
	end
	local t2 = os.clock()
	print(string.format("split_string ratio A/B = %.3f (A %.3f s, B %.3f s, %d calls each) x=%d",
		(t1 - t0) / (t2 - t1), t1 - t0, t2 - t1, rounds, x))
	return
end

local rounds = math.max(1, math.floor(1500 * SCALE + 0.5))
local x = 0
for _ = 1, rounds do
	x = (x + words_a(N) + words_b(N)) % 1000000007
end
print(string.format("split_string rounds=%d x=%d", rounds, x))
