-- ljlog e2e: a program that handles SIGPROF itself, and ljlog sampling.
-- Modes (argument 1):
--   jitprofile LOG   jit.profile (LuaJIT's own profiler) runs, then
--                    ljlog.start samples: ljlog must refuse with a message
--   cmod LOG MODULE  the C module installs its own handler and arms
--                    ITIMER_PROF, then ljlog.start samples: likewise
--   late             ljlog samples from LUAJIT_PROFILE; the program then
--                    starts jit.profile, taking SIGPROF over, and stops it
--   none             no profiler: the reference result
-- Prints "result R" (the work's result, the same in every mode) and "own
-- N" (N: whether the program's own handler kept getting its signals);
-- with ljlog.start, "start V" (V: what it returned, true or nil).
local mode, log, modpath = arg[1], arg[2], arg[3]

local function busy(n)
	local s = 0
	for i = 1, n do
		s = (s * 31 + i) % 1000003
	end
	return s
end

local own, stop_own = 0, nil
if mode == "jitprofile" or mode == "late" then
	if mode == "late" then
		busy(3e7)
	end
	local profile = require("jit.profile")
	profile.start("i1", function(_, n)
		own = own + n
	end)
	stop_own = profile.stop
elseif mode == "cmod" then
	local cmod = assert(package.loadlib(modpath, "luaopen_sample_cmod"))()
	assert(cmod.sigprof(1000))
	stop_own = function()
		own = cmod.sigprof_count()
		cmod.sigprof(0)
	end
elseif mode == "none" then
	stop_own = function()
		own = 1
	end
else
	error("usage: sample_clash.lua jitprofile|cmod|late|none ...")
end

if mode == "jitprofile" or mode == "cmod" then
	local ljlog = require("ljlog")
	local ok = ljlog.start("sample=250us,wall,file=" .. log)
	print("start", ok)
	if ok then
		ljlog.stop()
	end
end
local r = busy(1e8)
stop_own()
if mode == "late" then
	busy(3e7) -- ljlog's handler is back (jit.profile restores it)
end
print("result", r)
print("own", own > 0 and "N" or 0)
