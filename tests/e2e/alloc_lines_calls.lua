-- ljlog e2e: the lines of each function that call something, read from
-- LuaJIT's own bytecode (jit.util), for alloc_lines.sh. A builtin that a
-- trace compiles in (string.format, a C function by the FFI) allocates on
-- its caller's line there, while the interpreter charges it to the builtin
-- itself: such a line may be a site with the JIT on and not in the exact
-- run's list. Prints "KEY<TAB>line" for every line of every function of the
-- files given that holds a CALL, CALLM, CALLT, CALLMT or ITERC, where KEY
-- is the function as ljlog's reports locate it: "path:linedefined", or
-- "main chunk (path)".
local jutil = require("jit.util")
local vmdef = require("jit.vmdef")
local calls = {CALL = true, CALLM = true, CALLT = true, CALLMT = true, ITERC = true}

local function walk(pt, path)
	local fi = jutil.funcinfo(pt)
	local key = fi.linedefined == 0 and ("main chunk (" .. path .. ")")
		or (path .. ":" .. fi.linedefined)
	local seen = {}
	for pc = 1, math.huge do
		local ins = jutil.funcbc(pt, pc)
		if not ins then break end
		local op = vmdef.bcnames:sub(ins % 256 * 6 + 1, ins % 256 * 6 + 6):gsub(" ", "")
		local line = jutil.funcinfo(pt, pc).currentline
		if calls[op] and line and not seen[line] then
			seen[line] = true
			io.write(key, "\t", line, "\n")
		end
	end
	for i = -1, -math.huge, -1 do
		local k = jutil.funck(pt, i)
		if k == nil then break end
		if type(k) == "proto" then walk(k, path) end
	end
end

for _, path in ipairs(arg) do
	local f = loadfile(path)
	if f then walk(f, path) end
end
