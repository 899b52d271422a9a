-- ljlog differential corpus: nbody.
-- Case: a numeric n-body simulation (five bodies, a sun and four planets,
-- simple symplectic Euler steps) with its natural functions:
--   advance()          one time step: pairwise forces (sqrt), then moves,
--   energy()           total energy, pairwise (sqrt); sampled every 4th
--                      step to watch the drift,
--   offset_momentum()  once per run (negligible).
-- Floating point only; the printed energies are rounded to 9 digits (the
-- JIT and the interpreter do the same IEEE operations on x86-64).
-- No designed split (advance dominates, energy a minority). With the JIT
-- on, jit.profile's mode f puts no check in a loop that stays in one
-- function (advance's and energy's inner loops): it charges a sample
-- there to the next check after the loop, which the exits' side traces
-- often meet in energy's code (jit.p about 75/24, the truth 86/14). The
-- third argument "ratio" times the two apart and prints the true shares.
-- Scale 1 (measured): about 0.30 s of CPU with the JIT on, 2.56 s off.
-- Arguments: [SCALE [off [ratio]]]  (SCALE multiplies the work; off:
-- jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local sqrt = math.sqrt
local PI = 3.141592653589793
local MASS0 = 4 * PI * PI
local YEAR = 365.24

local function body(x, y, z, vx, vy, vz, m)
	return { x = x, y = y, z = z, vx = vx * YEAR, vy = vy * YEAR, vz = vz * YEAR, m = m * MASS0 }
end

local function make_system()
	return {
		body(0, 0, 0, 0, 0, 0, 1),
		body(5.2, -0.9, -0.1, 0.0015, 0.0069, -0.00003, 0.00095),
		body(8.3, 4.1, -0.4, -0.0028, 0.0050, 0.00002, 0.00029),
		body(12.9, -15.1, -0.2, 0.0030, 0.0024, -0.00003, 0.000044),
		body(15.4, -25.9, 0.18, 0.0027, 0.0016, -0.00009, 0.000052),
	}
end

local function offset_momentum(b)
	local px, py, pz = 0, 0, 0
	for i = 1, #b do
		local bi = b[i]
		px, py, pz = px + bi.vx * bi.m, py + bi.vy * bi.m, pz + bi.vz * bi.m
	end
	b[1].vx, b[1].vy, b[1].vz = -px / MASS0, -py / MASS0, -pz / MASS0
end

local function advance(b, nb, dt)
	for i = 1, nb do
		local bi = b[i]
		local bx, by, bz, bm = bi.x, bi.y, bi.z, bi.m
		local bvx, bvy, bvz = bi.vx, bi.vy, bi.vz
		for j = i + 1, nb do
			local bj = b[j]
			local dx, dy, dz = bx - bj.x, by - bj.y, bz - bj.z
			local d2 = dx * dx + dy * dy + dz * dz
			local mag = dt / (d2 * sqrt(d2))
			local bmm = bj.m * mag
			bvx, bvy, bvz = bvx - dx * bmm, bvy - dy * bmm, bvz - dz * bmm
			bmm = bm * mag
			bj.vx, bj.vy, bj.vz = bj.vx + dx * bmm, bj.vy + dy * bmm, bj.vz + dz * bmm
		end
		bi.vx, bi.vy, bi.vz = bvx, bvy, bvz
		bi.x, bi.y, bi.z = bx + dt * bvx, by + dt * bvy, bz + dt * bvz
	end
end

local function energy(b, nb)
	local e = 0
	for i = 1, nb do
		local bi = b[i]
		local vx, vy, vz, m = bi.vx, bi.vy, bi.vz, bi.m
		e = e + 0.5 * m * (vx * vx + vy * vy + vz * vz)
		for j = i + 1, nb do
			local bj = b[j]
			local dx, dy, dz = bi.x - bj.x, bi.y - bj.y, bi.z - bj.z
			e = e - m * bj.m / sqrt(dx * dx + dy * dy + dz * dz)
		end
	end
	return e
end

local steps = math.max(1, math.floor(2500000 * SCALE + 0.5))
if arg and arg[3] == "ratio" then
	-- The true split: the two functions timed apart, as the program
	-- calls them (advance every step, energy every 4th), printed as
	-- "share LINEDEFINED PERCENT" (tests/e2e/jitp_harness.py, --truth).
	local sys = make_system()
	local nb = #sys
	offset_momentum(sys)
	local ta, te = 0, 0
	for _ = 1, 8 do
		local t0 = os.clock()
		for _ = 1, math.floor(steps / 8) do
			advance(sys, nb, 0.01)
		end
		local t1 = os.clock()
		for _ = 1, math.floor(steps / 32) do
			energy(sys, nb)
		end
		local t2 = os.clock()
		ta, te = ta + (t1 - t0), te + (t2 - t1)
	end
	local la = debug.getinfo(advance, "S").linedefined
	local le = debug.getinfo(energy, "S").linedefined
	print(string.format("share %d %.2f", la, 100 * ta / (ta + te)))
	print(string.format("share %d %.2f", le, 100 * te / (ta + te)))
	return
end
local sys = make_system()
local nb = #sys
offset_momentum(sys)
local e0 = energy(sys, nb)
local emin, emax = e0, e0
for s = 1, steps do
	advance(sys, nb, 0.01)
	if s % 4 == 0 then
		local e = energy(sys, nb)
		if e < emin then emin = e end
		if e > emax then emax = e end
	end
end
print(string.format("nbody steps=%d e0=%.9f e=%.9f min=%.9f max=%.9f",
	steps, e0, energy(sys, nb), emin, emax))
