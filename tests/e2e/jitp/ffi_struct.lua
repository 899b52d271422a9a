-- ljlog differential corpus: ffi_struct.
-- Case: FFI cdata without C calls: an array of C structs (particles) and
-- an int32 grid, updated by Lua code that the JIT compiles to plain loads
-- and stores:
--   integrate()  moves the particles (struct field loads/stores, doubles),
--   deposit()    bins them into the int32 grid (cdata array stores),
--   reduce()     sums the grid with integer arithmetic.
-- With the JIT off every cdata access goes through the FFI's metamethods,
-- so the interpreter is much slower here than in other programs: about
-- 60 times slower than the JIT (scale 1: ~0.04 s JIT on, ~2.6 s JIT off;
-- give the JIT-on runs a larger scale).
-- Results are kept exact (positions wrap on a power-of-two box with steps
-- that are multiples of 1/64).
-- No designed split.
-- Scale 1 (measured): about 0.04 s of CPU with the JIT on, 2.50 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1
local ffi = require("ffi")

local NP, G = 4096, 64
local parts = ffi.new("struct { double x, y, vx, vy; }[?]", NP)
local grid = ffi.new("int32_t[?]", G * G)

for i = 0, NP - 1 do
	local p = parts[i]
	p.x, p.y = (i * 37) % G, (i * 91) % G
	p.vx, p.vy = ((i % 13) - 6) / 64, ((i % 7) - 3) / 32
end

local function integrate(ps, n)
	for i = 0, n - 1 do
		local p = ps[i]
		local x, y = p.x + p.vx, p.y + p.vy
		if x < 0 then x = x + G elseif x >= G then x = x - G end
		if y < 0 then y = y + G elseif y >= G then y = y - G end
		p.x, p.y = x, y
	end
end

local function deposit(ps, n, g)
	ffi.fill(g, G * G * 4)
	for i = 0, n - 1 do
		local p = ps[i]
		local cell = math.floor(p.y) * G + math.floor(p.x)
		g[cell] = g[cell] + 1 + i % 3
	end
end

local function reduce(g)
	local s = 0
	for c = 0, G * G - 1 do
		s = s + g[c] * (c % 5 + 1)
	end
	return s
end

local rounds = math.max(1, math.floor(2000 * SCALE + 0.5))
local x = 0
for r = 1, rounds do
	integrate(parts, NP)
	deposit(parts, NP, grid)
	x = (x + reduce(grid)) % 1000000007
end
print(string.format("ffi_struct rounds=%d x=%d", rounds, x))
