-- ljlog e2e: a CPU split known by construction. f and g run the same loop
-- body; f does 3 * N iterations for every N of g, in alternation, so f
-- takes 75% of the time spent in the two.
-- Arguments: on|off (the JIT), ROUNDS or cpu=SECONDS (rounds until the
-- process has used that much CPU time, read with os.clock every round:
-- bench/load_split.sh shows what that read does to CPU-time sampling on
-- a machine with more runnable threads than cores).
local mode = arg[1]
local rounds, cpu = tonumber(arg[2]), tonumber((arg[2] or ""):match("^cpu=([%d.]+)$"))
assert(rounds or cpu, "usage: on|off ROUNDS|cpu=SECONDS")
if mode == "off" then
	jit.off()
end
local N = 200000

local function f(n)
	local s = 1
	for i = 1, 3 * n do
		s = (s * 31 + i) % 1000003
	end
	return s
end

local function g(n)
	local s = 1
	for i = 1, n do
		s = (s * 31 + i) % 1000003
	end
	return s
end

local t, r = 0, 0
while (rounds and r < rounds) or (cpu and os.clock() < cpu) do
	t = t + f(N) + g(N)
	r = r + 1
end
print(t)
