-- ljlog e2e: LuaJIT's own view of the trace events of a program, from
-- jit.attach, for comparing with ljlog's `jit` events of the same run.
-- LuaJIT keeps one handler per event, so ours chains to the handler that
-- was attached before it (ljlog's, when the program runs under ljlog with
-- `jit`): both see every event.
-- Usage: luajit sample_jitattach.lua OUT PROG [ARGS...]
-- OUT gets one line per event, tab-separated:
--   chained N                         N = 1: a handler was there before ours
--   trace TRACENO CHUNK:LINE PARENT ROOT   a trace compiled (LINE: where it
--                                     starts; PARENT, ROOT: 0 for a root trace)
--   abort CODE MESSAGE                a trace aborted (LuaJIT's message)
--   flush                             all traces flushed
local out, prog = arg[1], arg[2]
assert(out and prog, "usage: sample_jitattach.lua OUT PROG [ARGS...]")
local jutil = require("jit.util")
local vmdef = require("jit.vmdef")

-- The "trace" handler attached now, if any: LuaJIT keeps handlers in the
-- registry table _VMEVENTS, one slot per event; a probe finds the slot.
local function trace_handler()
	local events = debug.getregistry()._VMEVENTS
	local before = {}
	for k, v in pairs(events or {}) do
		before[k] = v
	end
	local probe = function() end
	jit.attach(probe, "trace")
	for k, v in pairs(debug.getregistry()._VMEVENTS) do
		if v == probe then
			return before[k]
		end
	end
end
local prev = trace_handler()

local lines, started, roots = { "chained\t" .. (prev and 1 or 0) }, {}, {}
local function where(func, pc)
	local fi = jutil.funcinfo(func, pc)
	return (fi.source or "?"):gsub("^[@=]", "") .. ":" .. (fi.currentline or 0)
end

jit.attach(function(...)
	local what, tr, func, pc, otr, oex = ...
	if what == "start" then
		local parent = otr or 0
		local root = parent ~= 0 and ((roots[parent] or 0) ~= 0 and roots[parent] or parent) or 0
		started[tr] = { where(func, pc), parent, root }
	elseif what == "stop" then
		local s = started[tr] or { "?", "?", "?" }
		roots[tr] = s[3]
		lines[#lines + 1] = string.format("trace\t%d\t%s\t%s\t%s", tr, s[1], s[2], s[3])
	elseif what == "abort" then
		local msg = vmdef.traceerr[otr] or tostring(otr)
		if type(oex) == "number" and msg:find("%%d") then
			msg = msg:format(oex)
		elseif oex ~= nil and msg:find("%%s") then
			msg = msg:format(type(oex) == "string" and oex or tostring(oex))
		end
		lines[#lines + 1] = string.format("abort\t%d\t%s", otr, msg)
	elseif what == "flush" then
		roots = {}
		lines[#lines + 1] = "flush"
	end
	if prev then
		prev(...)
	end
end, "trace")

local pargs = {}
for i = 3, #arg do
	pargs[#pargs + 1] = arg[i]
end
local chunk = assert(loadfile(prog))
arg = pargs
arg[0] = prog
chunk(unpack(pargs))
local f = assert(io.open(out, "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
