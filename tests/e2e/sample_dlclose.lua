-- ljlog e2e: samples in a library that is closed while the program runs.
-- Each round opens sample_ffi.so with ffi.load, spends its time in
-- ljlog_test_ffi_alloc (via alloc_in_c), drops the library and collects
-- it (LuaJIT dlcloses it), then works in Lua. The last round stops the
-- profiler while the library is still open.
-- Arguments: FFI-LIBRARY ROUNDS [stop] (stop: call ljlog.stop() last).
local ffi = require("ffi")
local libpath = arg[1]
local rounds = assert(tonumber(arg[2]), "usage: FFI-LIBRARY ROUNDS [stop]")
ffi.cdef([[uint64_t ljlog_test_ffi_alloc(int64_t n);]])

local function alloc_in_c(lib, n)
	local s = 0
	for _ = 1, 20 do
		s = s + tonumber(lib.ljlog_test_ffi_alloc(n))
	end
	return s
end

local function lua_work()
	local t = {}
	for i = 1, 200000 do
		t[i % 100 + 1] = i
	end
	return t[1]
end

local total = 0
for r = 1, rounds do
	local lib = ffi.load(libpath)
	total = total + alloc_in_c(lib, 20000)
	if r == rounds then
		if arg[3] == "stop" then
			require("ljlog").stop()
		end
		break
	end
	lib = nil -- luacheck: ignore
	collectgarbage()
	collectgarbage()
	total = total + lua_work()
end
print(total)
