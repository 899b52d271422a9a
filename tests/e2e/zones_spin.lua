-- ljlog e2e (zones.sh): a CPU-bound loop inside zone "spin", for 0.4 s of
-- the process's CPU time (os.clock: the same clock the sampler ticks on).
local ljlog = require "ljlog"
local function spin(limit)
	local x, t0 = 0, os.clock()
	while os.clock() - t0 < limit do
		for i = 1, 10000 do x = x + i % 7 end
	end
	return x
end
ljlog.zone("spin")
local x = spin(0.4)
ljlog.zone()
print(x > 0)
