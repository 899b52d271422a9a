-- ljlog e2e: a program with many functions for the report's default view
-- (issue 25): 45 functions, function k called k times, so that each has
-- its own count and the table is longer than its 20 rows.
local fs = {}
for k = 1, 45 do
	fs[k] = load("return function(x) return x + " .. k .. " end", "=gen" .. k)()
end
local s = 0
for k = 1, 45 do
	for _ = 1, k do
		s = s + fs[k](1)
	end
end
print(s > 0)
