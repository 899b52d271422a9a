-- ljlog e2e: a program for the report's sections: Lua work, allocation and
-- GC cycles, for a few hundred milliseconds.
local function churn(n)
	local t = {}
	for i = 1, n do
		t[i] = { i, tostring(i) }
	end
	return #t
end

local function spin(n)
	local s = 0
	for i = 1, n do
		s = s + i % 7
	end
	return s
end

local total = 0
for _ = 1, 60 do
	total = total + churn(3000) + spin(1000000)
end
print(total > 0)
