-- ljlog e2e: programs that spend most of their time in one builtin, called
-- from one Lua function (ranking.sh). luajit ranking.lua MODE [N]:
--   gsub    clean() strips vowels from a long text with string.gsub
--   sort    order() sorts a copy of 20000 strings with table.sort and a
--           comparator
--   concat  join() joins 50000 pieces with table.concat
--   format  render() formats rows with string.format
-- The Lua function of each mode is on its own lines; none returns the
-- builtin's result directly (a tail call would drop its frame).
local mode, n = arg[1], tonumber(arg[2] or "1")

local function clean(s)
	local left, k = s:gsub("[aeiou]+", "")
	return #left + k
end

local function desc(a, b)
	return a > b
end

local function order(words)
	local t = {}
	for i = 1, #words do
		t[i] = words[i]
	end
	table.sort(t, desc)
	local first = t[1]
	return first
end

local function join(parts)
	local s = table.concat(parts, ",")
	local len = #s
	return len
end

local function render(rows)
	local acc = 0
	for i = 1, #rows do
		local r = rows[i]
		local line = string.format("%-24s|%12.4f|%08x|%5d%%", r[1], r[2], r[3], r[4])
		acc = acc + #line
	end
	return acc
end

local out = 0
if mode == "gsub" then
	local text = string.rep("the quick brown fox jumps over the lazy dog ", 4000)
	for _ = 1, 40 * n do
		out = out + clean(text)
	end
elseif mode == "sort" then
	local words = {}
	for i = 1, 20000 do
		words[i] = string.format("w%07d", (i * 7919) % 20011)
	end
	for _ = 1, 6 * n do
		out = out + #order(words)
	end
elseif mode == "concat" then
	local parts = {}
	for i = 1, 50000 do
		parts[i] = tostring(i)
	end
	for _ = 1, 300 * n do
		out = out + join(parts)
	end
elseif mode == "format" then
	local rows = {}
	for i = 1, 2000 do
		rows[i] = {"name" .. i, i / 7, i * 2654435761 % 4294967296, i % 100}
	end
	for _ = 1, 600 * n do
		out = out + render(rows)
	end
else
	error("mode: gsub, sort, concat or format")
end
print(mode, out)
