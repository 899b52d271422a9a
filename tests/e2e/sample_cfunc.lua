-- ljlog e2e: C functions called from Lua, for sampled stacks that must
-- show them by name above their Lua caller.
--   via_ffi   calls ljlog_test_ffi_spin (sample_ffi.so) through the FFI
--   via_api   calls sample_cmod.spin (a lua_CFunction) through the C API
-- Arguments: FFI-LIBRARY C-MODULE ROUNDS [off] (off: the JIT off).
local ffi = require("ffi")
local libpath, modpath = arg[1], arg[2]
local rounds = assert(tonumber(arg[3]), "usage: FFI-LIB C-MODULE ROUNDS [off]")
if arg[4] == "off" then
	jit.off()
end
ffi.cdef([[uint64_t ljlog_test_ffi_spin(int64_t n);]])
local lib = ffi.load(libpath)
local cmod = assert(package.loadlib(modpath, "luaopen_sample_cmod"))()

local function via_ffi(n)
	local s = 0
	for _ = 1, 50 do
		s = s + tonumber(lib.ljlog_test_ffi_spin(n))
	end
	return s
end

local function via_api(n)
	local s = 0
	for _ = 1, 50 do
		s = s + cmod.spin(n)
	end
	return s
end

local total = 0
for _ = 1, rounds do
	total = total + via_ffi(20000) + via_api(20000)
end
print(total)
