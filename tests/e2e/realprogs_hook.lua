-- ljlog e2e: the independent call counter for real programs (realprogs.sh).
-- luajit realprogs_hook.lua OUT SCRIPT [ARGS...]: run SCRIPT as `luajit
-- SCRIPT ARGS...` would (global arg, varargs), with the JIT off, under a
-- debug.sethook call counter; when it returns or calls os.exit, write to OUT:
--   fn <count> <linedefined> <source>       per Lua function (and main chunk)
--                                           of the program
--   edge <count> <caller linedefined> <caller source> <linedefined> <source>
--                                           calls of a Lua function from a
--                                           Lua function (the frame below it
--                                           when the hook fires; after a tail
--                                           call, the tail caller's caller)
--   lib <count> <name>...                   per C or fast function named in
--                                           package.loaded ("string.find"):
--                                           all its names (and LuaJIT's
--                                           library functions written in
--                                           Lua, such as table.remove)
--   sortcmp <linedefined> <source>          a Lua function table.sort called
--                                           (a comparator: its count depends
--                                           on the order of the input)
--   event <count> <name>                    hook events by name
--   exit <status>                           os.exit's status (true: 0)
-- Sources are %XX-escaped. Then it exits as the program would have.
local out, prog = ...
assert(out and prog, "usage: realprogs_hook.lua OUT SCRIPT [ARGS...]")

jit.off()
jit.flush()

local getinfo, sethook = debug.getinfo, debug.sethook
local fn, edge, event, sortcmp, cfn = {}, {}, {}, {}, {}
local sort = table.sort
local me = getinfo(1, "S").source

-- Hooks do not fire inside a hook, so nothing here counts itself.
local function hook(ev)
	event[ev] = (event[ev] or 0) + 1
	local ar = getinfo(2, "Sf")
	-- LuaJIT's library functions written in Lua (table.remove: source
	-- "remove", linedefined -1) count as library functions.
	if (ar.what ~= "Lua" and ar.what ~= "main") or ar.linedefined < 0 then
		cfn[ar.func] = (cfn[ar.func] or 0) + 1
		return
	end
	local key = ar.linedefined .. " " .. ar.source
	fn[key] = (fn[key] or 0) + 1
	local up = getinfo(3, "Sf")
	if up and (up.what == "Lua" or up.what == "main") and up.linedefined >= 0 and up.source ~= me then
		local e = up.linedefined .. " " .. up.source .. "\0" .. key
		edge[e] = (edge[e] or 0) + 1
	elseif up and up.func == sort then
		sortcmp[key] = true
	end
end

local function escape(s)
	return (s:gsub("[^%w%p]", function(c)
		return string.format("%%%02X", c:byte())
	end))
end

local function key_out(k)
	local line, src = k:match("^(-?%d+) (.*)$")
	return line .. " " .. escape(src)
end

local function dump(status)
	sethook()
	local f = assert(io.open(out, "w"))
	for k, n in pairs(fn) do
		f:write("fn ", n, " ", key_out(k), "\n")
	end
	for k, n in pairs(edge) do
		local a, b = k:match("^(.*)%z(.*)$")
		f:write("edge ", n, " ", key_out(a), " ", key_out(b), "\n")
	end
	-- C and fast functions by their names in package.loaded, as ljlog
	-- names them: "module.field", or "field" of _G.
	-- A function may have several (lfs.dir is pl.path.dir): all of them.
	local cname = {}
	for mod, t in pairs(package.loaded) do
		if type(mod) == "string" and type(t) == "table" then
			for k, v in pairs(t) do
				if type(k) == "string" and type(v) == "function" then
					local name = mod == "_G" and k or mod .. "." .. k
					cname[v] = (cname[v] or "") .. " " .. escape(name)
				end
			end
		end
	end
	cfn[sethook] = nil -- the call that removed the hook
	for fun, n in pairs(cfn) do
		if cname[fun] then
			f:write("lib ", n, cname[fun], "\n")
		end
	end
	for k in pairs(sortcmp) do
		f:write("sortcmp ", key_out(k), "\n")
	end
	for k, n in pairs(event) do
		f:write("event ", n, " ", escape(k), "\n")
	end
	f:write("exit ", tostring(status), "\n")
	f:close()
end

-- The program's view of its command line, as luajit's own main sets it.
local args, nargs = { select(3, ...) }, select("#", ...) - 2
local a = { [-1] = arg[-1], [0] = prog }
for i = 1, nargs do
	a[i] = args[i]
end
arg = a

local exit = os.exit
os.exit = function(status, close)
	dump(status == nil and 0 or status)
	return exit(status, close)
end

local chunk = assert(loadfile(prog))
-- (No library function is called between sethook and the chunk.)
local function main(...)
	sethook(hook, "c")
	return chunk(...)
end
main(unpack(args, 1, nargs))
dump(0)
