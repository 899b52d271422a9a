-- ljlog e2e: samples in libraries that are closed while the program runs.
-- Each round opens sample_ffi.so with ffi.load, spends its time in
-- ljlog_test_ffi_alloc (via alloc_in_c), drops the library and collects
-- it (LuaJIT dlcloses it), then works in Lua. The C module sample_cmod.so,
-- opened with package.loadlib, is called last (cmod_in_c) and closed by
-- lua_close at the end. With stop, the last round stops the
-- profiler while the libraries are still open.
-- Arguments: FFI-LIBRARY C-MODULE ROUNDS [stop] (stop: ljlog.stop() last).
local ffi = require("ffi")
local libpath, modpath = arg[1], arg[2]
local rounds = assert(tonumber(arg[3]), "usage: FFI-LIBRARY C-MODULE ROUNDS [stop]")
local cmod = assert(package.loadlib(modpath, "luaopen_sample_cmod"))()
ffi.cdef([[uint64_t ljlog_test_ffi_alloc(int64_t n);]])

local function alloc_in_c(lib, n)
	local s = 0
	for _ = 1, 20 do
		s = s + tonumber(lib.ljlog_test_ffi_alloc(n))
	end
	return s
end

local function cmod_in_c(n)
	local s = 0
	for _ = 1, 20 do
		s = s + cmod.alloc(n)
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
		-- The C module last: its function is named while lua_close
		-- unloads it.
		total = total + cmod_in_c(20000)
		if arg[4] == "stop" then
			require("ljlog").stop()
		end
		break
	end
	lib = nil -- luacheck: ignore
	collectgarbage()
	collectgarbage()
	-- Compiled code may keep the closed library's addresses (a trace
	-- guards on the library's userdata, whose memory the next ffi.load
	-- may reuse): LuaJIT on arm64 under qemu-user called into the
	-- unmapped code by the fifth round, without ljlog. Throw it away.
	jit.flush()
	total = total + lua_work()
end
print(total)
