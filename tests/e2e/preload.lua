-- ljlog e2e: preload (preload.sh), run by tests/e2e/plainhost. Calls f N
-- times (arg 2) and the host's C function host.twice N times, then prints
-- "vm V done N SUM" last.
local v, n = ...
n = tonumber(n) or 1000
local function f(x)
	local y = x + 1
	return y
end
local s = 0
for i = 1, n do
	s = s + f(i) + host.twice(i)
end
print("vm " .. v .. " done " .. n .. " " .. s)
