-- ljlog e2e helper (dofile'd by sample_modes.lua and alloc_record.lua):
-- the compiler off (no trace is added meanwhile), count over the traces
-- there are, as LuaJIT lists them (jit.util, jit.vmdef), the traces and
-- their IR PROF instructions (a check with its snapshot each), for the
-- traces that allocate (TNEW, TDUP) and for the others. Returns ntr,
-- nprof: tables indexed by true (allocates) and false.
local jutil = require("jit.util")
local irnames = require("jit.vmdef").irnames

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
return ntr, nprof
