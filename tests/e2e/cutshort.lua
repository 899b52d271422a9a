-- ljlog e2e: a program that ends abruptly (cutshort.sh): it calls work()
-- ROUNDS times, writes ROUNDS to arg[2] when given, then leaves with
-- _exit(3), without lua_close, as a crashing host or os._exit would.
-- arg[1]: ROUNDS; arg[3] "spin": after the rounds, loop until killed.
local ffi = require "ffi"
ffi.cdef "void _exit(int);"

local function work(n)
	local t = {}
	for i = 1, n do t[i] = tostring(i) end
	return #t
end

local rounds = tonumber(arg[1])
for _ = 1, rounds do work(100) end
if arg[2] and arg[2] ~= "" then
	local f = assert(io.open(arg[2], "w"))
	f:write(rounds, "\n")
	f:close()
end
if arg[3] == "spin" then
	while true do work(100) end
end
ffi.C._exit(3)
