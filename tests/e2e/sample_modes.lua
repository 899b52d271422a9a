-- ljlog e2e: the snapshots ljlog has LuaJIT's recorder put into compiled
-- code. One loop makes a table per iteration (its first instruction
-- allocates); another calls a small function of several lines, which the
-- JIT inlines into the loop's trace, and allocates nothing. Prints, for the
-- traces that allocate (TNEW, TDUP) and for the others, the number of
-- traces and of IR PROF instructions (each a check with its snapshot: one
-- where the function changes in LuaJIT's profiler mode f, one where the
-- line changes in mode l), as LuaJIT itself lists them (jit.util,
-- jit.vmdef). The compiler is off while counting: no trace is added.
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

jit.off()
local ntr, nprof = { [true] = 0, [false] = 0 }, { [true] = 0, [false] = 0 }
for tr = 1, 1000 do
	local info = jutil.traceinfo(tr)
	if not info then
		break
	end
	local allocates, prof = false, 0
	for ref = 1, info.nins do
		local _, ot = jutil.traceir(tr, ref)
		local op = math.floor(ot / 256)
		local name = irnames:sub(op * 6 + 1, op * 6 + 6)
		if name == "PROF  " then
			prof = prof + 1
		elseif name == "TNEW  " or name == "TDUP  " then
			allocates = true
		end
	end
	ntr[allocates] = ntr[allocates] + 1
	nprof[allocates] = nprof[allocates] + prof
end
print(ntr[true], nprof[true], ntr[false], nprof[false], s > 0)
