-- ljlog e2e: the independent call counter.
-- luajit hookcount.lua OUT PROGRAM [ARGS...]: run PROGRAM (with ARGS) with
-- the JIT off under a debug.sethook call counter, and write to OUT one line
-- per function:
--   lua <count> <linedefined> <source> <short_src>
--                             (source as LuaJIT keeps it, short_src as
--                             debug.getinfo shows it; both %XX-escaped)
--   lib <count> <name>        (a few library functions, by identity)
local out, prog = ...
assert(out and prog, "usage: hookcount.lua OUT PROGRAM [ARGS...]")

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
		local key = ar.source .. "\0" .. ar.linedefined .. "\0" .. ar.short_src
		lua_counts[key] = (lua_counts[key] or 0) + 1
	else
		local n = libname[ar.func]
		if n then
			lib_counts[n] = (lib_counts[n] or 0) + 1
		end
	end
end

local chunk = assert(loadfile(prog))
local args, nargs = { select(3, ...) }, select("#", ...) - 2
debug.sethook(hook, "c")
-- (unpack is not one of the counted library functions.)
chunk(unpack(args, 1, nargs))
debug.sethook()

local f = assert(io.open(out, "w"))
-- A load()ed string's source is its code: escape spaces, newlines, ...
local function escape(s)
	return (s:gsub("[^%w%p]", function(c)
		return string.format("%%%02X", c:byte())
	end))
end
for key, n in pairs(lua_counts) do
	local src, line, short = key:match("^(.*)%z(%d+)%z(.*)$")
	f:write(string.format("lua %d %s %s %s\n", n, line, escape(src), escape(short)))
end
for name, n in pairs(lib_counts) do
	f:write(string.format("lib %d %s\n", n, name))
end
f:close()
