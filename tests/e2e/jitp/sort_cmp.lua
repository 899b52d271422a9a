-- ljlog differential corpus: sort_cmp.
-- Case: table.sort (C) with a Lua comparator. sort_records() refills an
-- array of records and sorts it with by_score(), a Lua function called
-- O(n log n) times from C (comparisons of two fields); checksum() walks
-- the sorted array. table.sort itself is not compiled; the comparator is
-- compiled as small traces ending in a return to C. table.sort's own C
-- work has sort_records as innermost Lua function; jit.profile takes its
-- samples at the next bytecode boundary, so it charges that C time mostly
-- to by_score (the next Lua code to run).
-- No designed split.
-- Scale 1 (measured): about 0.47 s of CPU with the JIT on, 0.73 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local N = 2000

local function by_score(a, b)
	if a.score ~= b.score then
		return a.score > b.score
	end
	return a.id < b.id
end

local function sort_records(recs, n, seed)
	for i = 1, n do
		local r = recs[i]
		r.id = (i * 7919 + seed) % 100003
		r.score = (r.id * 31 + seed) % 997
	end
	table.sort(recs, by_score)
end

local function checksum(recs, n)
	local s = 0
	for i = 1, n do
		s = (s * 3 + recs[i].id) % 1000003
	end
	return s
end

local recs = {}
for i = 1, N do
	recs[i] = { id = 0, score = 0 }
end
local rounds = math.max(1, math.floor(1000 * SCALE + 0.5))
local x = 0
for r = 1, rounds do
	sort_records(recs, N, r)
	x = (x + checksum(recs, N)) % 1000000007
end
print(string.format("sort_cmp rounds=%d x=%d", rounds, x))
