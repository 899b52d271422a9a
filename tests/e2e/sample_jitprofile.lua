-- ljlog e2e: run a program under LuaJIT's own profiler (jit.profile, the
-- engine of -jp) and write its samples per innermost function.
-- Usage: luajit sample_jitprofile.lua OUT MODE PROG [ARGS...]
--   MODE   jit.profile mode, e.g. "fi1" (by function, 1 ms)
--   OUT    lines "COUNT<TAB>chunk:linedefined", chunk without its '@'
--          (the way ljlog names Lua functions); "C" for C functions, "J"
--          for the JIT compiler
local out, mode, prog = arg[1], arg[2], arg[3]
assert(out and mode and prog, "usage: sample_jitprofile.lua OUT MODE PROG [ARGS...]")
local profile = require("jit.profile")

local counts = {}
local function key(th)
	local i = debug.getinfo(th, 0, "S")
	if not i then
		return "?"
	end
	if i.what == "C" then
		return "C"
	end
	local src = i.source:gsub("^[@=]", "")
	return src .. ":" .. i.linedefined
end

-- The program sees its own arguments in arg.
local pargs = {}
for i = 4, #arg do
	pargs[#pargs + 1] = arg[i]
end
local chunk = assert(loadfile(prog))
arg = pargs
arg[0] = prog

-- Stop and write the counts: after the program, or when it calls
-- os.exit (luacheck and LDoc end so).
local function finish()
	profile.stop()
	local f = assert(io.open(out, "w"))
	for k, n in pairs(counts) do
		f:write(n, "\t", k, "\n")
	end
	f:close()
end
local exit = os.exit
os.exit = function(...)
	finish()
	return exit(...)
end

-- Samples in the JIT compiler (vmstate "J") are the compiler's, as ljlog
-- shows them ("(jit compiler)"), not the Lua function whose trace it
-- records or assembles: both sides leave them out of the functions'
-- shares. (Beside other work on the machine, assembling can take most of
-- a run's time: its mcode's mprotect calls grow dearer.)
profile.start(mode, function(th, samples, vmstate)
	local k = vmstate == "J" and "J" or key(th)
	counts[k] = (counts[k] or 0) + samples
end)
chunk(unpack(pargs))
finish()
