-- ljlog e2e: allocation sites of heap objects (tests/e2e/heap_site.sh).
-- With exact `alloc`, each object of a snapshot carries the site of the
-- ALLOC that made its block. Built by construction, with no JIT (traces
-- allocate elsewhere) and the GC stopped (nothing is freed, so no block
-- address is reused): NT tables at one line, NS fresh strings at
-- another, then, between snapshots 1 and 2, NA tables at a third.
-- The program prints each structure's count and its bytes as
-- collectgarbage("count") moves while it is built; heap_site.sh finds the
-- lines by their "@site" comments.
local ljlog = require "ljlog"
jit.off()
local NT = tonumber(arg[1]) or 300
local NS = tonumber(arg[2]) or 150
local NA = tonumber(arg[3]) or 70
local NPOOL = tonumber(arg[4]) or 4000

TABS, STRS, ADDED = false, false, false
-- A large string table: the strings below do not make it grow.
POOL = {}
for i = 1, NPOOL do POOL[i] = "pool string " .. i end
local function count() return collectgarbage("count") * 1024 end

collectgarbage("collect")
collectgarbage("collect")
collectgarbage("stop")

-- Warm up: the globals exist, the array parts below are presized.
local tabs, strs, added = {}, {}, {}
for i = 1, NT do tabs[i] = false end
for i = 1, NS do strs[i] = false end
for i = 1, NA do added[i] = false end
local digits = {}
for i = 1, NS do digits[i] = ("%023d"):format(i) end
local prefix = "heap-site string "
local warm = prefix .. ("x"):rep(23) -- grows the concatenation's buffer

-- The tables: NT empty tables.
local b = count()
for i = 1, NT do
	tabs[i] = {} -- @site tables
end
local tbytes = count() - b
-- The strings: NS fresh strings of 40 bytes, made by the concatenation
-- (BC_CAT: the Lua line is the site, as string.format's would be its
-- fast function).
b = count()
for i = 1, NS do
	strs[i] = prefix .. digits[i] -- @site strings
end
local sbytes = count() - b
TABS, STRS = tabs, strs
ljlog.snapshot()
-- Added between the snapshots: NA tables.
b = count()
for i = 1, NA do
	added[i] = {} -- @site added
end
local abytes = count() - b
ADDED = added
ljlog.snapshot()
print(("tn=%d tbytes=%d sn=%d sbytes=%d an=%d abytes=%d"):format(NT,
	tbytes, NS, sbytes, NA, abytes))
