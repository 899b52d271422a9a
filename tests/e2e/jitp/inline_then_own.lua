-- ljlog differential corpus: inline_then_own.
-- Case: a hot loop in loop_body() calls two tiny functions, sq() and cube(),
-- which the JIT inlines into loop_body's trace, then does arithmetic of its
-- own (a modulo chain) in the same iteration. With the JIT on, the samples
-- of the inlined calls land in loop_body's trace; with the JIT off, sq and
-- cube are real frames and take a share of their own.
-- No designed split (JIT on: expect loop_body to dominate).
-- Scale 1 (measured): about 0.48 s of CPU with the JIT on, 1.12 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local function sq(x)
	return x * x
end

local function cube(x)
	return x * x * x
end

local function loop_body(n, s)
	for i = 1, n do
		local x = i % 4096
		s = (s * 3 + sq(x) + cube(x) * 0.5) % 1000003
		s = (s * 7 + x) % 999983
		s = (s + (s % 61) * (x % 13)) % 1000033
	end
	return s
end

local rounds = math.max(1, math.floor(70 * SCALE + 0.5))
local s = 1
for _ = 1, rounds do
	s = loop_body(250000, s)
end
print(string.format("inline_then_own rounds=%d s=%.1f", rounds, s))
