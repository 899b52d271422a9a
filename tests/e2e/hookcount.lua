-- ljlog e2e: the independent call counter.
-- luajit hookcount.lua OUT PROGRAM: run PROGRAM with the JIT off under a
-- debug.sethook call counter, and write to OUT one line per function:
--   lua <count> <linedefined> <source without '@'>
--   lib <count> <name>        (a few library functions, by identity)
local out, prog = ...
assert(out and prog, "usage: hookcount.lua OUT PROGRAM")

jit.off()
jit.flush()

local lib = {
	["string.rep"] = string.rep,
	["table.insert"] = table.insert,
	["pcall"] = pcall,
	["error"] = error,
	["select"] = select,
	["coroutine.create"] = coroutine.create,
	["coroutine.wrap"] = coroutine.wrap,
	["coroutine.resume"] = coroutine.resume,
	["coroutine.yield"] = coroutine.yield,
	["setmetatable"] = setmetatable,
}
local libname = {}
for k, f in pairs(lib) do
	libname[f] = k
end

local lua_counts, lib_counts = {}, {}
local getinfo = debug.getinfo

-- Hooks do not fire inside a hook, so nothing here counts itself.
local function hook()
	local ar = getinfo(2, "Sf")
	if ar.what == "Lua" or ar.what == "main" then
		local key = ar.source .. "\0" .. ar.linedefined
		lua_counts[key] = (lua_counts[key] or 0) + 1
	else
		local n = libname[ar.func]
		if n then
			lib_counts[n] = (lib_counts[n] or 0) + 1
		end
	end
end

local chunk = assert(loadfile(prog))
debug.sethook(hook, "c")
chunk()
debug.sethook()

local f = assert(io.open(out, "w"))
for key, n in pairs(lua_counts) do
	local src, line = key:match("^(.*)%z(%d+)$")
	f:write(string.format("lua %d %s %s\n", n, line, (src:gsub("^@", ""))))
end
for name, n in pairs(lib_counts) do
	f:write(string.format("lib %d %s\n", n, name))
end
f:close()
