-- ljlog e2e (zones_export.sh): CPU-bound work in zone "spin" (function
-- in_zone) then the same work outside any zone (function out_zone), each
-- for 0.3 s of the process's CPU time (os.clock, the sampler's clock).
-- Two functions of their own, so that a stack says which part it is from.
local ljlog = require "ljlog"
local function in_zone(limit)
	local x, t0 = 0, os.clock()
	while os.clock() - t0 < limit do
		for i = 1, 10000 do x = x + i % 7 end
	end
	return x
end
local function out_zone(limit)
	local x, t0 = 0, os.clock()
	while os.clock() - t0 < limit do
		for i = 1, 10000 do x = x + i % 5 end
	end
	return x
end
ljlog.zone("spin")
local a = in_zone(0.3)
ljlog.zone()
local b = out_zone(0.3)
print(a > 0 and b > 0)
