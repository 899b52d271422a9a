-- ljlog e2e: allocations the JIT sinks (alloc_sink.sh). In each loop a
-- table is made on one line and escapes on the next, every fourth
-- iteration only (kept in a list): with allocation sinking the JIT makes
-- the table only where it escapes, at the trace's exit or in the side
-- trace compiled there. A table with an array part (TNEW), one with a
-- hash part (TDUP). The lists are kept; the rest is collected before the
-- end, so what lives at the end is the kept tables.
-- Usage: alloc_sink.lua N   (N iterations per loop)
local n = tonumber(arg[1]) or 4000
local keep_a, keep_h = {}, {}

local function arrays(n)
	for i = 1, n do
		local t = { i, i + 1 } -- ARRAY CONSTRUCTOR
		if i % 4 == 0 then keep_a[#keep_a + 1] = t end -- ARRAY ESCAPES
	end
end

local function hashes(n)
	for i = 1, n do
		local t = { x = i, y = -i } -- HASH CONSTRUCTOR
		if i % 4 == 0 then keep_h[#keep_h + 1] = t end -- HASH ESCAPES
	end
end

arrays(n)
hashes(n)
collectgarbage()
collectgarbage()
print(#keep_a, #keep_h)
