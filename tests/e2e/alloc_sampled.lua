-- ljlog e2e (alloc_sampled.sh): three sites making tables of three sizes
-- in the proportions 1:2:3 (N, 2N, 3N). Site A's tables are kept (live at
-- the end), B's and C's are garbage, collected at the end. Prints N.
local N = tonumber(arg[1]) or 60000
kept = {}
for i = 1, N do kept[i] = false end
local function a(n)
	for i = 1, n do
		kept[i] = {} -- SITE A
	end
end
local function b(n)
	for i = 1, n do
		last = {1, 2} -- SITE B
	end
end
local function c(n)
	for i = 1, n do
		last = {1, 2, 3, 4, 5, 6} -- SITE C
	end
end
a(N)
b(2 * N)
c(3 * N)
last = nil
collectgarbage()
collectgarbage()
print(N)
