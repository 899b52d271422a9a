-- ljlog e2e: one VM's heap in the C host (heap_trig.sh): thread K holds
-- K * 1000 tables in the global MINE, each {K, i}.
local k = assert(tonumber((...)), "usage: heap_thread.lua K")
MINE = {}
for i = 1, k * 1000 do MINE[i] = {k, i} end
