-- ljlog e2e (leaks.sh): a leak made by construction. keep() stores N new
-- tables in the global `kept` (one allocation each, on its own line);
-- churn() makes M tables that become garbage and are collected. Prints
-- N and M.
local N, M = tonumber(arg[1]) or 5000, tonumber(arg[2]) or 20000
kept = {}
for i = 1, N do kept[i] = false end -- the array part grows here, once
local function keep(n)
	for i = 1, n do
		kept[i] = {} -- LEAK
	end
end
local function churn(m)
	for i = 1, m do
		last = {} -- GARBAGE
	end
	last = nil
end
keep(N)
churn(M)
collectgarbage()
collectgarbage()
print(N, M)
