-- ljlog differential corpus: table_heavy.
-- Case: table construction and hash lookups across three functions:
--   build()     constructs N records { id =, name =, score = } with table
--               constructors and indexes them by name (string keys),
--   lookup()    hash lookups by name and field reads, with misses,
--   tally()     groups the records into a count table keyed by a derived
--               small integer and a string (hash and array parts).
-- No designed split.
-- Scale 1 (measured): about 0.48 s of CPU with the JIT on, 1.07 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local N = 3000
local NAMES = {}
for i = 1, N do
	NAMES[i] = "user" .. (i * 2654435761) % 1000003
end
local GROUPS = { "red", "green", "blue", "cyan", "magenta", "yellow", "black" }

local function build(names, n, round)
	local list, by_name = {}, {}
	for i = 1, n do
		local rec = { id = i, name = names[i], score = (i * 37 + round) % 1000 }
		list[i] = rec
		by_name[rec.name] = rec
	end
	return list, by_name
end

local function lookup(by_name, names, n)
	local hits, sum = 0, 0
	for i = 1, 2 * n do
		local rec = by_name[names[(i * 7) % n + 1]]
		if rec then
			hits = hits + 1
			sum = sum + rec.score + rec.id
		end
		if by_name["missing" .. i % 5] then
			hits = hits - 1
		end
	end
	return hits + sum
end

local function tally(list, groups)
	local counts = {}
	for i = 1, #list do
		local rec = list[i]
		local g = groups[rec.score % #groups + 1]
		local bucket = counts[g]
		if not bucket then
			bucket = {}
			counts[g] = bucket
		end
		local k = rec.score % 10 + 1
		bucket[k] = (bucket[k] or 0) + 1
	end
	local total = 0
	for _, g in ipairs(groups) do
		local b = counts[g]
		for k = 1, 10 do
			total = total + (b and b[k] or 0) * k
		end
	end
	return total
end

local rounds = math.max(1, math.floor(1500 * SCALE + 0.5))
local x = 0
for r = 1, rounds do
	local list, by_name = build(NAMES, N, r)
	x = (x + lookup(by_name, NAMES, N) + tally(list, GROUPS)) % 1000000007
end
print(string.format("table_heavy rounds=%d x=%d", rounds, x))
