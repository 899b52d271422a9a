-- ljlog differential corpus: recursion.
-- Case: a recursive function, fib(), and a non-recursive helper, mix(),
-- that fib calls at every inner node of the recursion (not as a tail call:
-- fib keeps its frame). With the JIT on, LuaJIT compiles the recursion as
-- an up-recursive trace, and mix() is inlined into it. jit.p attributes
-- samples to fib and mix (JIT off: real frames for both).
-- No designed split.
-- Scale 1 (measured): about 0.55 s of CPU with the JIT on, 2.09 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
-- With the JIT on, LuaJIT compiles true recursion as up- and
-- down-recursive traces and many side traces off their exits, in an order
-- that varies from run to run: fib's share moved between 40% and 60% from
-- one run to the next (ljlog and jit.p alike). Without recursive traces
-- (recunroll=0: the recursion runs in the interpreter, mix is compiled)
-- ljlog's runs are alike (fib 84-88%); jit.profile's are not: its own
-- exits at each sample compile side traces, and in one run of three the
-- program ran a third faster with mix at 40%. tests/e2e/jitp.sh shows
-- the JIT-on comparison without judging it.
if jit and jit.opt then
	jit.opt.start("recunroll=0")
end
local SCALE = tonumber(arg and arg[1]) or 1

local mix

local function fib(n)
	if n < 2 then
		return n
	end
	local a = fib(n - 1)
	local b = fib(n - 2)
	local r = mix(a, b, n)
	return r
end

function mix(a, b, n)
	local h = (a + b) % 1000000007
	local t = (h * 31 + n) % 1009
	return h + t - t
end

local rounds = math.max(1, math.floor(170 * SCALE + 0.5))
local s = 0
for r = 1, rounds do
	s = (s + fib(26 + r % 2)) % 1000000007
end
print(string.format("recursion rounds=%d s=%d", rounds, s))
