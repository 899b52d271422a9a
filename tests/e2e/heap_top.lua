-- ljlog e2e: retained sizes and readable paths (tests/e2e/heap_top.sh).
-- Each structure is built with the GC stopped between two readings of
-- collectgarbage("count"): LuaJIT's total moves by exactly the bytes of
-- the new live objects when nothing else allocates. So: no JIT (traces
-- allocate), every global set later exists beforehand (no _G resize), a
-- large string table (no resize), and each structure is built once
-- before, to grow the temporary buffer and the stack.
local ljlog = require "ljlog"
jit.off()
local N = tonumber(arg[1]) or 200

HOLD, PAIR, WSTRONG, WV, WONLY, HANDLER, CO, NEW = false, false, false,
	false, false, false, false, false
NAMED, OKEY, CLASS, CLASS2, P1, P2, P3, Q1, Q2 = false, false, false,
	false, false, false, false, false, false
POOL = {}
for i = 1, 40000 do POOL[i] = "pool string " .. i end

local function build(n, tag)
	local t = {}
	for i = 1, n do
		t[i] = {name = string.format("%s-name-%06d", tag, i), id = i}
	end
	return t
end

local function count() return collectgarbage("count") * 1024 end

collectgarbage("collect")
collectgarbage("collect")
collectgarbage("stop")

-- HOLD: a table of N subtables, each with a fresh string.
local warm = build(N, "warm")
local b = count()
HOLD = build(N, "hold")
local hold_delta = count() - b

-- PAIR: a string shared by PAIR.a and PAIR.b: retained by PAIR only.
warm = {a = {s = string.rep("wpair", 200)}, b = {}}
b = count()
local sh = string.rep("spair", 200)
PAIR = {a = {s = sh}, b = {s = sh}}
local pair_delta = count() - b
sh = nil

-- WV: a weak-valued table holding WSTRONG retains only itself and its
-- metatable; WONLY's value is held weakly only.
WSTRONG = {payload = string.rep("x", 2000) .. "strong"}
b = count()
WV = setmetatable({x = WSTRONG}, {__mode = "v"})
local wv_delta = count() - b
WONLY = setmetatable({}, {__mode = "v"})
WONLY.t = {string.format("%s %s", "weakly held", "only")}

-- An upvalue and a suspended coroutine's local, strings made at run time
-- (no constant of the chunk reaches them).
local handler_line = debug.getinfo(1, "l").currentline + 3
do
	local cache = string.format("%s %s", "upvalue", "cache")
	HANDLER = function() return cache end
end
local co_line = debug.getinfo(1, "l").currentline + 1
CO = coroutine.create(function()
	local buf = string.format("%s %s", "coroutine", "buf")
	coroutine.yield()
	return buf .. "!"
end)
coroutine.resume(CO)

-- Keys: not a name, a keyword, an object.
OKEY = {"object key"}
NAMED = {["a b"] = {"under a b"}, ["end"] = {"under end"}, [OKEY] = {"under okey"}}

-- Metatables: one with __name, one without.
CLASS = {__name = "Point"}
CLASS2 = {}
warm = {setmetatable({}, CLASS), setmetatable({}, CLASS), setmetatable({}, CLASS)}
b = count()
P1 = setmetatable({}, CLASS)
P2 = setmetatable({}, CLASS)
P3 = setmetatable({}, CLASS)
local point_delta = count() - b
Q1 = setmetatable({}, CLASS2)
Q2 = setmetatable({}, CLASS2)
warm = nil

assert(ljlog.snapshot()) -- 1

-- NEW: built between snapshots 1 and 2.
warm = build(N, "neww")
b = count()
NEW = build(N, "newt")
local new_delta = count() - b
warm = nil
assert(ljlog.snapshot()) -- 2

print(string.format("N=%d hold=%d pair=%d wv=%d point=%d new=%d handler_line=%d co_line=%d",
	N, hold_delta, pair_delta, wv_delta, point_delta, new_delta, handler_line, co_line))
