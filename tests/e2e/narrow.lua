-- ljlog e2e: two phases apart (narrow.sh). phase_a() runs 40 rounds of
-- work (each calling a_leaf() 50 times), then gap() spins about 20 ms of
-- CPU around the mark "B", then phase_b() runs 60 rounds (each calling
-- b_leaf() 50 times and making a table). Every call of phase_a and
-- a_leaf is entered before the mark, every call of phase_b and b_leaf
-- after it, and the spin keeps them 10 ms of CPU or more from it.
local ljlog = require "ljlog"

local function spin(ms)
	local t0, x = os.clock(), 0
	while os.clock() - t0 < ms / 1000 do
		x = (x * 7 + 1) % 1000003
	end
	return x
end

local function a_leaf(x)
	for i = 1, 2000 do
		x = (x * 31 + i) % 1000003
	end
	return x
end

local function phase_a(x)
	for _ = 1, 50 do
		x = a_leaf(x) -- not a tail call: phase_a stays on the stack
	end
	return x
end

local function b_leaf(x)
	for i = 1, 2000 do
		x = (x * 17 + i) % 1000003
	end
	return x
end

local made = {}
local function phase_b(x)
	for _ = 1, 50 do
		x = b_leaf(x)
	end
	made[#made + 1] = {x}
	return x
end

local function gap()
	local r = spin(10) -- not a tail call (see narrow.sh)
	return r
end

local x = 1
for _ = 1, 40 do
	x = phase_a(x)
end
x = x + gap()
ljlog.mark("B")
x = x + gap()
for _ = 1, 60 do
	x = phase_b(x)
end
print(string.format("narrow x %d made %d", x, #made))
