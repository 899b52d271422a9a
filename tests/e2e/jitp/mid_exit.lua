-- ljlog differential corpus: mid_exit.
-- Case: a loop in walk() with a trace exit in its middle. Each iteration
-- calls before(i), then loads an element of a table that holds numbers
-- except every 64th element, which is a numeric string ("1234"): the
-- trace's type guard on the load fails there, in the middle of the
-- iteration, after before() and before after(v, x) (after() does
-- arithmetic on the element, which coerces the string). The store to
-- seen[1] between them makes the trace take a snapshot there, so the exit
-- resumes in the middle of the iteration (without it the exit would go
-- back to the iteration's start). The guard fails often enough that a side
-- trace is compiled from that exit (with -jv: "(3/4) mid_exit.lua:48").
-- No designed split (before() and after() have similar amounts of
-- arithmetic; walk() holds the loop, the load and the store).
-- Scale 1 (measured): about 0.35 s of CPU with the JIT on, 2.49 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local DATA, SEEN = {}, { 0 }
for i = 1, 4096 do
	local v = (i * 37) % 1000
	if i % 64 == 0 then
		DATA[i] = tostring(v)
	else
		DATA[i] = v
	end
end

local function before(i)
	local x = (i * 13 + 7) % 65521
	x = (x * x + 11) % 65519
	x = (x * 5 + i % 97) % 65497
	return x
end

local function after(v, x)
	local y = (v * 3 + x) % 65479
	y = (y * y + 17) % 65449
	y = (y * 7 + v % 89) % 65447
	return y
end

local function walk(n, acc)
	local data, seen = DATA, SEEN
	for i = 1, n do
		local x = before(i)
		seen[1] = x -- a store: the trace takes a snapshot here
		local v = data[i % 4096 + 1]
		acc = (acc + after(v, x)) % 1000000007
	end
	return acc
end

local rounds = math.max(1, math.floor(110 * SCALE + 0.5))
local acc = 0
for _ = 1, rounds do
	acc = walk(250000, acc)
end
print(string.format("mid_exit rounds=%d acc=%d", rounds, acc))
