-- ljlog e2e: allocation lines in compiled code (alloc_lines.sh). A request
-- handler that caches an entry two lines into a function, its key made on
-- another line, and a table made right after an inlined function returns;
-- with sampled allocation (no snapshot per line), LuaJIT's snapshots cover
-- several lines, and the allocations must still be on the lines that make
-- them. Lines that allocate say so (ALLOC).
local N = tonumber(arg and arg[1]) or 60000
local cache = {}
local body = string.rep("x", 40)
local made = 0
local keep = {}

local function field(t)
	return t.path
end

local function lookup(req, id)
	local key = field(req) .. "?" .. id -- ALLOC key
	local e = cache[key]
	if not e then
		made = made + 1
		e = {body = body, hits = 0, at = made} -- ALLOC entry
		cache[key] = e -- ALLOC grow
	end
	e.hits = e.hits + 1
	return e
end

local function handle(req)
	local total = 0
	for id = 1, 40 do
		local x = id * 3
		local pair = {x, x + 1} -- ALLOC pair
		total = total + lookup(req, id).hits + #pair
	end
	local p = field(req)
	keep[#keep % 64 + 1] = {p, total} -- ALLOC after return
	return total
end

local paths = {"/a", "/b", "/c", "/d"}
local s = 0
for i = 1, N do
	local req = {path = paths[i % 4 + 1] .. i % 2000} -- ALLOC request
	s = s + handle(req)
end
print(s, made)
