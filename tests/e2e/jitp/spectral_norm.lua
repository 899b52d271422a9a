-- ljlog differential corpus: spectral_norm.
-- Case: the spectral norm of the infinite matrix a(i,j) = 1/((i+j)(i+j+1)/2+i+1)
-- by power iteration, with its natural functions:
--   entry()      the matrix entry, a tiny function called n*n times per
--                product (inlined by the JIT into the product loops),
--   mul_av()     v = A u,
--   mul_atv()    v = A^T u,
--   mul_atav()   v = A^T A u (calls the two; negligible work of its own).
-- No designed split per innermost function, but mul_av and mul_atv do the
-- same work: timed with os.clock around each call, their CPU times are
-- equal (0.99:1 JIT on and off). entry() is a real frame with the JIT off
-- and inlined into both with the JIT on, so how entry's samples split
-- from its callers' depends on the profiler (jit.p, JIT on, two runs:
-- entry 58-65%, mul_av 20-27%, mul_atv 15-16%).
-- Scale 1 (measured): about 0.10 s of CPU with the JIT on, 2.24 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local function entry(i, j)
	local ij = i + j - 1
	return 1.0 / (ij * (ij - 1) * 0.5 + i)
end

local function mul_av(x, y, n)
	for i = 1, n do
		local a = 0
		for j = 1, n do
			a = a + x[j] * entry(i, j)
		end
		y[i] = a
	end
end

local function mul_atv(x, y, n)
	for i = 1, n do
		local a = 0
		for j = 1, n do
			a = a + x[j] * entry(j, i)
		end
		y[i] = a
	end
end

local function mul_atav(x, y, t, n)
	mul_av(x, t, n)
	mul_atv(t, y, n)
end

local function norm(n, iters)
	local u, v, t = {}, {}, {}
	for i = 1, n do
		u[i] = 1
	end
	for _ = 1, iters do
		mul_atav(u, v, t, n)
		mul_atav(v, u, t, n)
	end
	local vbv, vv = 0, 0
	for i = 1, n do
		local ui, vi = u[i], v[i]
		vbv, vv = vbv + ui * vi, vv + vi * vi
	end
	return math.sqrt(vbv / vv)
end

local rounds = math.max(1, math.floor(28 * SCALE + 0.5))
local s = 0
for r = 1, rounds do
	s = s + norm(300 + r % 4, 10)
end
print(string.format("spectral_norm rounds=%d s=%.9f", rounds, s))
