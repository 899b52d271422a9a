-- ljlog differential corpus: ffi_inlined.
-- Case: an FFI call to libc's strlen() (through ffi.C) on a 32 KiB buffer,
-- made from a small Lua function, clen(), that the JIT inlines into the
-- loop of scan(). Most of the CPU time is inside strlen. jit.profile never
-- samples inside C code: the time counts for the innermost Lua function,
-- clen (a real frame with the JIT off; inlined into scan's trace with the
-- JIT on, where it depends on how the profiler maps trace code back to
-- functions). A short memset per round in refill() adds a second, much
-- smaller C-heavy function.
-- No designed split (clen plus scan take nearly all the samples).
-- Scale 1 (measured): about 0.44 s of CPU with the JIT on, 0.80 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1
local ffi = require("ffi")
-- pcall: a host may have declared these already.
pcall(ffi.cdef, "size_t strlen(const char *s);")
pcall(ffi.cdef, "void *memset(void *s, int c, size_t n);")

local SIZE = 32768
local buf = ffi.new("char[?]", SIZE + 1)

local function refill(fill, len)
	ffi.C.memset(buf, fill, SIZE)
	buf[len] = 0
end

local function clen(p)
	local n = tonumber(ffi.C.strlen(p))
	return n
end

local function scan(calls)
	local total = 0
	for i = 1, calls do
		total = total + clen(buf) + (i % 3)
	end
	return total
end

local rounds = math.max(1, math.floor(100 * SCALE + 0.5))
local sum = 0
for r = 1, rounds do
	refill(65 + r % 26, SIZE - r % 64)
	sum = (sum + scan(30000)) % 1000000007
end
print(string.format("ffi_inlined rounds=%d sum=%d", rounds, sum))
