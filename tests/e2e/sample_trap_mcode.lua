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
local floor = math.floor

-- The printed total is an integer below 2^53, exact in doubles, so it is
-- the same whichever code computes it, interpreter or trace: each libm
-- result enters the sum as floor(x * 1024) (a product by a power of two is
-- exact), never through an inexact product added to something, which
-- arm64's JIT fuses into one rounding where the interpreter rounds twice.
local function mathy(n)
	local s = 0
	for i = 1, n do
		s = s + floor(math.sin(i) * 1024) + floor(math.exp(-i % 3) * 1024)
			+ floor(math.log(i) * 1024) + floor((i % 7) ^ 1.5 * 1024)
	end
	return s
end

-- ljlog_test_ffi_leaf(i) is sqrt(i * i + 1), whose floor is i.
local function ffiy(n)
	local s = 0
	for i = 1, n do
		s = s + floor(lib.ljlog_test_ffi_leaf(i)) + tonumber(C.strlen("sampling"))
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
print(string.format("%.0f", total))
