-- ljlog e2e: one program in two versions (compare.sh). luajit compare.lua V:
-- version 1 is the base; in version 2 step() is made slower (3 rounds of
-- mix() a call instead of 1, and a table a call), old_only() is gone and
-- new_only() is new. Calls with the JIT off, per version:
--   mix: 400 (V 1) or 1200 (V 2); step: 400; quick: 400;
--   old_only: 1 (V 1) or 0; new_only: 0 or 1 (V 2).
local V = tonumber(arg and arg[1]) or 1

local function mix(x)
	for i = 1, 10000 do
		x = (x * 33 + i) % 1000003
	end
	return x
end

local made = {}
local function step(x)
	for _ = 1, V == 2 and 3 or 1 do
		x = mix(x) -- not a tail call: step stays on the stack
	end
	if V == 2 then
		made[#made + 1] = {x, x + 1, x + 2, x + 3}
	end
	return x + 1
end

local function quick(x)
	for i = 1, 5000 do
		x = (x + i) % 1000003
	end
	return x
end

local function old_only(x)
	return x + 1
end

local function new_only(x)
	return x + 2
end

local x = 1
for _ = 1, 400 do
	x = step(x)
	x = quick(x)
end
if V == 2 then
	x = new_only(x)
else
	x = old_only(x)
end
print(string.format("compare version %d x %d made %d", V, x, #made))
