-- ljlog differential corpus: closures_gc.
-- Case: closure creation and GC pressure from many short-lived tables.
--   make_adder()  creates a closure (and its upvalue) per call,
--   make_points() allocates many small short-lived tables { x, y },
--   fold()        calls the closures (the anonymous function at line 18,
--                 keyed closures_gc.lua:18) and reads the tables.
-- All garbage becomes unreachable at once; the GC steps run in whichever
-- function allocates (make_adder, make_points). LuaJIT does not compile
-- closure creation (FNEW) in traces, so make_adder stays interpreted.
-- No designed split.
-- Scale 1 (measured): about 0.47 s of CPU with the JIT on, 1.17 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local function make_adder(k)
	local bias = k % 13
	return function(v)
		return (v + k * 3 + bias) % 1000003
	end
end

local function make_points(n, seed)
	local pts = {}
	for i = 1, n do
		pts[i] = { (i * seed) % 101, (i + seed) % 97 }
	end
	return pts
end

local function fold(adders, pts)
	local s = 0
	for i = 1, #pts do
		local p = pts[i]
		local f = adders[i % #adders + 1]
		s = f(s + p[1] * p[2])
	end
	return s
end

local rounds = math.max(1, math.floor(600 * SCALE + 0.5))
local x = 0
for r = 1, rounds do
	local adders = {}
	for k = 1, 2000 do
		adders[k] = make_adder(k + r)
	end
	local pts = make_points(20000, r)
	x = (x + fold(adders, pts)) % 1000000007
end
print(string.format("closures_gc rounds=%d x=%d", rounds, x))
