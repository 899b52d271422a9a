-- ljlog e2e: the snapshots ljlog has LuaJIT's recorder put into compiled
-- code. One loop makes a table per iteration (its first instruction
-- allocates); another calls a small function of several lines, which the
-- JIT inlines into the loop's trace, and allocates nothing. Prints, for the
-- traces that allocate (TNEW, TDUP) and for the others, the number of
-- traces and of IR PROF instructions (each a check with its snapshot: one
-- where the function changes in LuaJIT's profiler mode f, one where the
-- line changes in mode l), as LuaJIT itself lists them (jit.util,
-- jit.vmdef). The compiler is off while counting: no trace is added.
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

local ntr, nprof = dofile((arg[0]:match("^(.*/)") or "./") .. "jit_prof.lua")
print(ntr[true], nprof[true], ntr[false], nprof[false], s > 0)
