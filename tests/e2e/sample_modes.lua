-- ljlog e2e: the snapshots ljlog has LuaJIT's recorder put into compiled
-- code. A loop calls a small function of several lines, which the JIT
-- inlines into the loop's trace. Prints the number of traces and of IR
-- PROF instructions over them (each a check with its snapshot: one where
-- the function changes in LuaJIT's profiler mode f, one where the line
-- changes in mode l), as LuaJIT itself lists them (jit.util, jit.vmdef).
local jutil = require("jit.util")
local irnames = require("jit.vmdef").irnames

local function weigh(rec)
	local x = rec.value
	local y = rec.weight
	local z = x * y
	return z + 1
end

local recs = {}
for i = 1, 64 do
	recs[i] = { value = i, weight = i % 7 }
end
local s = 0
for i = 1, 200000 do
	s = s + weigh(recs[i % 64 + 1])
end

local traces, prof = 0, 0
for tr = 1, 1000 do
	local info = jutil.traceinfo(tr)
	if not info then
		break
	end
	traces = traces + 1
	for ref = 1, info.nins do
		local _, ot = jutil.traceir(tr, ref)
		local op = math.floor(ot / 256)
		if irnames:sub(op * 6 + 1, op * 6 + 6) == "PROF  " then
			prof = prof + 1
		end
	end
end
print(traces, prof, s > 0)
