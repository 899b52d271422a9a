-- ljlog e2e (zones.sh): zones and marks. Rounds of allocations of fixed
-- size at three lines: inside zone "A" (line LA), inside zone "B" nested
-- in "A" (line LB), outside any zone (line LO). The JIT and the GC are off
-- so that nothing else allocates inside the zones; the tables that keep
-- the objects are made, at full size, before the first zone.
-- Prints what it did: rounds, allocations per round at each line, the
-- marks, and the message of a zone popped too often ("none" unprofiled).
local ljlog = require "ljlog"
jit.off()
local ROUNDS, NA, NB, NO = 3, 40, 20, 10
local keep_a, keep_b, keep_o = {}, {}, {}
for i = 1, ROUNDS * NA do keep_a[i] = false end
for i = 1, ROUNDS * NB do keep_b[i] = false end
for i = 1, ROUNDS * NO do keep_o[i] = false end
local long = string.rep("x", 300)
local rname = {}
for r = 1, ROUNDS do rname[r] = "round " .. r end
collectgarbage("collect")
collectgarbage("stop")
local ia, ib, io_ = 0, 0, 0
ljlog.mark("start")
for r = 1, ROUNDS do
	ljlog.zone("A")
	for _ = 1, NA do ia = ia + 1; keep_a[ia] = {} end -- LA
	ljlog.zone("B")
	for _ = 1, NB do ib = ib + 1; keep_b[ib] = {} end -- LB
	ljlog.mark(rname[r])
	ljlog.zone()
	ljlog.zone()
	for _ = 1, NO do io_ = io_ + 1; keep_o[io_] = {} end -- LO
end
ljlog.mark(long)
local ok, err = pcall(function() ljlog.zone() end) -- POP
collectgarbage("restart")
print(ROUNDS, NA, NB, NO, ok and "none" or err)
