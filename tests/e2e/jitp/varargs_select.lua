-- ljlog differential corpus: varargs_select.
-- Case: vararg functions:
--   sum_args(...)    select('#', ...) and select(i, ...) in a loop,
--   pack_args(...)   { ... } with select('#', ...) as n,
--   spread(t, n)     calls sum_args(unpack(t, 1, n)) and keeps its frame
--                    (no tail call),
--   relay(...)       forwards ... to pack_args (not a tail call either).
-- drive() calls them with argument lists of 3 to 8 values.
-- No designed split.
-- Scale 1 (measured): about 0.49 s of CPU with the JIT on, 0.78 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local select, unpack = select, unpack or table.unpack

local function sum_args(...)
	local s = 0
	for i = 1, select("#", ...) do
		local v = select(i, ...)
		s = (s * 3 + v) % 65521
	end
	return s
end

local function pack_args(...)
	local t = { ... }
	t.n = select("#", ...)
	return t
end

local function relay(...)
	local t = pack_args(...)
	return t
end

local function spread(t, n)
	local s = sum_args(unpack(t, 1, n))
	return s
end

local function drive(iters, acc)
	local buf = { 0, 0, 0, 0, 0, 0, 0, 0 }
	for i = 1, iters do
		local n = i % 6 + 3
		for k = 1, n do
			buf[k] = (i + k * 7) % 1000
		end
		acc = (acc + spread(buf, n)) % 1000000007
		local t = relay(i % 97, i % 89, i % 83, n)
		acc = (acc + t.n + t[1] + t[2] * t[3] + sum_args(i, n, t[4])) % 1000000007
	end
	return acc
end

local rounds = math.max(1, math.floor(100 * SCALE + 0.5))
local acc = 0
for _ = 1, rounds do
	acc = drive(20000, acc)
end
print(string.format("varargs_select rounds=%d acc=%d", rounds, acc))
