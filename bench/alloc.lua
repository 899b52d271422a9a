-- Allocation-heavy benchmark: tables, strings and closures, JIT on.
local n = tonumber(arg and arg[1]) or 2000000
local keep = {}
for i = 1, n do
	local t = {i, i + 1, name = "x" .. i}
	local f = function() return t end
	keep[i % 1000 + 1] = f
end
print(#keep)
