-- ljlog e2e (heap_leaky.sh): a leak as users write it. A cache that never
-- evicts keeps N sessions (a table and a string each), a weak memo points
-- at them, and each request makes a temporary string (M of them, the GC
-- stopped so that all are still unfreed garbage at the snapshot). Snapshot
-- 1 before, 2 after; the exit snapshot (snapshot=exit) comes after the
-- main chunk returned, when nothing holds the local cache. A gmatch
-- iterator is kept and called once. arg[2] "nosnap": no snapshots.
-- Prints N and M.
local N = tonumber(arg[1]) or 20000
local snap = arg[2] ~= "nosnap"
local ljlog = require("ljlog")
local Cache = {sessions = {}}
local memo = setmetatable({}, {__mode = "k"})
local words = string.gmatch("alpha beta gamma", "%a+")
local first = words()
collectgarbage()
collectgarbage("stop")
if snap then ljlog.snapshot() end
local M = 0
for i = 1, N do
	local s = {id = i, user = "user" .. i, hits = 0}
	Cache.sessions[i] = s
	memo[s] = i
	local tmp = string.format("tmp-%d-%d", i, i * 7) -- TEMP
	M = M + 1
end
if snap then ljlog.snapshot() end
collectgarbage("restart")
print(N, M, first)
