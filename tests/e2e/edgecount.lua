-- ljlog e2e: the independent caller -> callee counter (frames.sh).
-- luajit edgecount.lua OUT PROGRAM: run PROGRAM with the JIT off under a
-- debug.sethook call hook and write to OUT, for every call of a Lua
-- function by a Lua function, one line per distinct pair:
--   <count> <caller short_src>:<linedefined> <callee short_src>:<linedefined>
-- The caller is the function one level below the callee (after a tail
-- call: the tail caller's caller); callers in this file are left out.
local out, prog = ...
assert(out and prog, "usage: edgecount.lua OUT PROGRAM")

jit.off()
jit.flush()

local getinfo = debug.getinfo
local me = getinfo(1, "S").short_src
local counts = {}

-- Hooks do not fire inside a hook, so nothing here counts itself.
local function hook()
	local callee = getinfo(2, "S")
	if callee.what ~= "Lua" and callee.what ~= "main" then
		return
	end
	local caller = getinfo(3, "S")
	if not caller or (caller.what ~= "Lua" and caller.what ~= "main") or caller.short_src == me then
		return
	end
	local key = caller.short_src .. ":" .. caller.linedefined .. " " .. callee.short_src .. ":" .. callee.linedefined
	counts[key] = (counts[key] or 0) + 1
end

local chunk = assert(loadfile(prog))
debug.sethook(hook, "c")
chunk()
debug.sethook()

local f = assert(io.open(out, "w"))
for key, n in pairs(counts) do
	f:write(n, " ", key, "\n")
end
f:close()
