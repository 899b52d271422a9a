-- ljlog e2e: calls that take unusual paths through the VM.
-- edge.sh compares the call counts with hookcount.lua's. Deterministic.

-- Deep recursion: the Lua stack is reallocated while frames are open.
local function deep(n)
	if n == 0 then
		return 0
	end
	return 1 + deep(n - 1)
end
for i = 1, 3 do
	deep(3000 * i)
end

-- xpcall with a Lua message handler, error values that are tables.
local function handler(m)
	return "handled: " .. tostring(m)
end
local function bad(x)
	error({ code = x })
end
for i = 1, 7 do
	xpcall(bad, handler, i)
end

-- C calling Lua: gsub, sort, __tostring, load with a reader function.
local function up(c)
	return c:upper()
end
for _ = 1, 5 do
	local _ = ("abcabc"):gsub("b", up)
end
local function gt(a, b)
	return a > b
end
local t = {}
for i = 1, 50 do
	t[i] = (i * 7919) % 101
end
table.sort(t, gt)
local mt = {
	__tostring = function()
		return "obj"
	end,
}
for _ = 1, 4 do
	tostring(setmetatable({}, mt))
end
local parts, pi = { "return ", "1 + ", "2" }, 0
local function reader()
	pi = pi + 1
	return parts[pi]
end
assert(load(reader, "=reader_chunk"))()

-- A binary chunk (string.dump), a chunk named by its source.
local function dumped(a)
	return a * 3
end
local g = assert(load(string.dump(dumped), "=binary"))
for i = 1, 6 do
	g(i)
end
local src = assert(load("local x = ... return x + 1"))
for i = 1, 5 do
	src(i)
end

-- Yield across pcall; errors inside coroutines.
local co = coroutine.wrap(function()
	for i = 1, 4 do
		pcall(function()
			coroutine.yield(i)
		end)
	end
end)
for _ = 1, 4 do
	co()
end
local co2 = coroutine.create(function()
	local x = nil
	return x.y
end)
assert(not coroutine.resume(co2))
local co3 = coroutine.wrap(function()
	error("in wrap")
end)
assert(not pcall(co3))

-- Metamethods that are Lua functions.
local meta = {
	__eq = function()
		return true
	end,
	__lt = function()
		return true
	end,
	__concat = function()
		return "c"
	end,
	__len = function()
		return 3
	end,
	__unm = function()
		return 0
	end,
	__newindex = function(self, k, v)
		rawset(self, k, v)
	end,
}
local V, W = setmetatable({}, meta), setmetatable({}, meta)
for i = 1, 3 do
	local _ = (V == W), (V < W), (V .. "x"), #V, -V
	V[i] = i
end

-- A Lua iterator; varargs with many values.
local function iter(s, i)
	if i < s then
		return i + 1
	end
end
for _ in iter, 10, 0 do
end
local function va(...)
	return select("#", ...)
end
for i = 1, 5 do
	va(unpack(t, 1, i * 10))
end
io.write("edge.lua done\n")
