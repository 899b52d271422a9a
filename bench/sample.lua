-- Sampling benchmark: a compute-bound program, JIT on. Spectral norm (calls
-- and floating point in nested loops) plus table and string work.
local n = tonumber(arg and arg[1]) or 1000

local function A(i, j)
	local ij = i + j - 1
	return 1.0 / (ij * (ij - 1) * 0.5 + i)
end

local function Av(x, y, N)
	for i = 1, N do
		local a = 0
		for j = 1, N do
			a = a + x[j] * A(i, j)
		end
		y[i] = a
	end
end

local function Atv(x, y, N)
	for i = 1, N do
		local a = 0
		for j = 1, N do
			a = a + x[j] * A(j, i)
		end
		y[i] = a
	end
end

local function AtAv(x, y, t, N)
	Av(x, t, N)
	Atv(t, y, N)
end

local function spectral(N)
	local u, v, t = {}, {}, {}
	for i = 1, N do
		u[i] = 1
	end
	for _ = 1, 10 do
		AtAv(u, v, t, N)
		AtAv(v, u, t, N)
	end
	local vBv, vv = 0, 0
	for i = 1, N do
		local ui, vi = u[i], v[i]
		vBv = vBv + ui * vi
		vv = vv + vi * vi
	end
	return math.sqrt(vBv / vv)
end

local function words(N)
	local count, s = {}, 0
	for i = 1, N do
		local w = string.char(97 + i % 26, 97 + (i * 7) % 26)
		count[w] = (count[w] or 0) + 1
		s = s + #w
	end
	return s
end

local r = 0
for _ = 1, 10 do
	r = r + spectral(n) + words(n * 200)
end
print(string.format("%.9f", r))
