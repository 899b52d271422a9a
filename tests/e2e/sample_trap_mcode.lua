-- ljlog e2e trap: samples in C code called from JIT-compiled traces, where
-- the host stack unwinds into machine code with no unwind information:
-- libm through math.*, FFI calls into a test library and into libc.
-- Arguments: FFI-LIBRARY ROUNDS.
local ffi = require("ffi")
local libpath = arg[1]
local rounds = assert(tonumber(arg[2]), "usage: FFI-LIBRARY ROUNDS")
ffi.cdef([[
double ljlog_test_ffi_leaf(double a);
uint64_t ljlog_test_ffi_spin(int64_t n);
size_t strlen(const char *s);
]])
local lib = ffi.load(libpath)
local C = ffi.C

local function mathy(n)
	local s = 0
	for i = 1, n do
		s = s + math.sin(i) * math.exp(-i % 3) + math.log(i) + (i % 7) ^ 1.5
	end
	return s
end

local function ffiy(n)
	local s = 0
	for i = 1, n do
		s = s + lib.ljlog_test_ffi_leaf(i) + tonumber(C.strlen("sampling"))
	end
	return s
end

local function spinny(n)
	local s = 0
	for _ = 1, n do
		s = s + tonumber(lib.ljlog_test_ffi_spin(2000))
	end
	return s
end

local total = 0
for _ = 1, rounds do
	total = total + mathy(20000) + ffiy(20000) + spinny(20)
end
print(string.format("%.6e", total))
