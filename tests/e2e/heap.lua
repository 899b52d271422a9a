-- ljlog e2e: a heap built by construction, snapshotted (tests/e2e/heap.sh).
-- Every object the checker looks for hangs from a global with a known name.
local ljlog = require "ljlog"
local N = tonumber(arg[1]) or 100

-- N distinct strings of 30 bytes in an array: LuaJIT sizes each
-- 24 + ((30 + 4) & ~3) = 56 bytes.
local holder = {}
for i = 1, N do holder[i] = string.format("heapstr%09d", i) .. ("y"):rep(14) end
HOLDER = holder

-- Hash keys of each kind.
local okey = {"object key"}
NAMED = {alpha = {"under alpha"}, [42] = {"under 42"}, [true] = {"under true"},
	[okey] = {"under okey"}}
OKEY = okey

-- Weak tables: keys, values.
local wkey = {"weak key"}
WK = setmetatable({}, {__mode = "k"})
WK[wkey] = {"strong value"}
WKEY = wkey
WV = setmetatable({}, {__mode = "v"})
WV.held = NAMED.alpha

-- A suspended coroutine with a local.
CO = coroutine.create(function(arg1)
	local colocal = {"co local"}
	coroutine.yield()
	return colocal, arg1
end)
coroutine.resume(CO, {"co arg"})

-- A closed upvalue.
do
	local captured = {"closed upvalue"}
	CLOSED = function() return captured end
end

-- An open upvalue: its function is suspended in a coroutine.
CO2 = coroutine.create(function()
	local openv = {"open upvalue"}
	coroutine.yield(function() return openv end)
end)
local _, inner = coroutine.resume(CO2)
INNER = inner

-- A userdata and a cdata with metatables.
UD = newproxy(true)
getmetatable(UD).__name = "HeapProxy"
local ffi = require "ffi"
ffi.cdef "typedef struct { int x; } heap_pt;"
PT = ffi.metatype("heap_pt", {__index = {kind = "heap_pt"}})(5)

assert(ljlog.snapshot()) -- 1
assert(ljlog.snapshot()) -- 2: every ID as in 1

-- A table freed, and a new one born at its address: a new ID.
VICTIM = {"victim"}
local addr = tostring(VICTIM)
assert(ljlog.snapshot()) -- 3
VICTIM = nil
collectgarbage()
collectgarbage()
local keep = {}
for i = 1, 200000 do
	local t = {"reborn"}
	if tostring(t) == addr then REBORN = t break end
	keep[i] = t
end
keep = nil
assert(REBORN, "no new table took the freed table's address")
assert(ljlog.snapshot()) -- 4

-- Mid-cycle: snapshots between incremental steps.
collectgarbage()
local junk = {}
for i = 1, 20000 do junk[i] = {i} end
junk = nil
for i = 1, 40 do
	collectgarbage("step", 0)
	assert(ljlog.snapshot())
end
print(ljlog.snapshot())
