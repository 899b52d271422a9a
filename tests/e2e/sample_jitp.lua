-- ljlog e2e: three functions doing different kinds of work with clearly
-- different costs (about 4 : 2 : 1 of the run), for comparing ljlog's
-- sampled top functions with LuaJIT's own profiler.
-- Arguments: ROUNDS [off] [calibrate | NUMERIC TABLES STRINGS]
-- (off: the JIT off). With calibrate it prints the iterations per round
-- that take each function about 8, 4 and 2 ms on this machine (the same
-- for both runs compared: they print the same total).
-- Every value is an integer below 2^53, exact in doubles, so the total is
-- the same whichever code computes it: the interpreter or any set of
-- traces (a profiler changes which traces are made, and arm64's JIT fuses
-- a multiply and an add into one rounding where the interpreter rounds
-- twice: inexact values made the two runs print different totals).
local rounds = assert(tonumber(arg and arg[1]), "usage: ROUNDS [off] [calibrate | N1 N2 N3]")
if arg[2] == "off" then
	jit.off()
end
-- Iterations per round when not given: about 8, 4 and 2 ms on x86-64 (the
-- interpreter is slower, and not by the same factor for each kind of work).
local N = arg[2] == "off" and { numeric = 110000, tables = 120000, strings = 52000 }
	or { numeric = 240000, tables = 320000, strings = 500000 }
if tonumber(arg[4]) then
	N = { numeric = tonumber(arg[3]), tables = tonumber(arg[4]), strings = tonumber(arg[5]) }
end

-- Floating-point work: a division (the modulo), a square root and a floor
-- per step, on integers (s < 1000003, i * s far below 2^53, the floor of
-- the square root of an integer is exact).
local function numeric(n)
	local s = 1
	for i = 1, n do
		s = (s + math.floor(math.sqrt(i * s % 9973 + 2))) % 1000003
	end
	return s
end

local function tables(n)
	local t, s = {}, 0
	for i = 1, n do
		t[i % 512 + 1] = i
		s = s + (t[(i * 7) % 512 + 1] or 0)
	end
	return s
end

local function strings(n)
	local str, s = "the quick brown fox jumps over the lazy dog", 0
	for i = 1, n do
		s = s + str:byte(i % #str + 1)
	end
	return s
end

-- Iterations of f that take about ms milliseconds of CPU time here (its
-- code compiled first, and measured again once warm).
local function calibrate(f, ms)
	local n, dt = 1000, 0
	for _ = 1, 2 do
		n = 1000
		while true do
			local t0 = os.clock()
			f(n)
			dt = os.clock() - t0
			if dt > 0.02 then
				break
			end
			n = n * 2
		end
	end
	return math.floor(n * ms / 1000 / dt) + 1
end

if arg[3] == "calibrate" then
	print(calibrate(numeric, 8), calibrate(tables, 4), calibrate(strings, 2))
	os.exit(0)
end

-- tables' sum is below n^2, strings' below 128 n: the total stays exact.
local total = 0
for _ = 1, rounds do
	total = (total + numeric(N.numeric) + tables(N.tables) + strings(N.strings)) % 1000000007
end
print(total)
