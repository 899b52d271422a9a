-- ljlog e2e: three functions doing different kinds of work with clearly
-- different costs (about 4 : 2 : 1 of the run), for comparing ljlog's
-- sampled top functions with LuaJIT's own profiler.
-- Arguments: ROUNDS [off] (off: the JIT off).
local rounds = assert(tonumber(arg and arg[1]), "usage: ROUNDS [off]")
if arg[2] == "off" then
	jit.off()
end
-- Iterations per round: about 8, 4 and 2 ms (the interpreter is slower,
-- and not by the same factor for each kind of work).
local N = arg[2] == "off" and { numeric = 200000, tables = 120000, strings = 52000 }
	or { numeric = 343000, tables = 320000, strings = 500000 }

local function numeric(n)
	local s = 0.5
	for i = 1, n do
		s = s + math.sqrt(i * s % 97 + 1.5)
	end
	return s
end

local function tables(n)
	local t, s = {}, 0
	for i = 1, n do
		t[i % 512 + 1] = i
		s = s + (t[(i * 7) % 512 + 1] or 0)
	end
	return s
end

local function strings(n)
	local str, s = "the quick brown fox jumps over the lazy dog", 0
	for i = 1, n do
		s = s + str:byte(i % #str + 1)
	end
	return s
end

local total = 0
for _ = 1, rounds do
	total = total + numeric(N.numeric) + tables(N.tables) + strings(N.strings)
end
print(total)
