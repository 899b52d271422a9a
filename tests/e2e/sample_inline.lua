-- ljlog e2e: small Lua functions that the JIT inlines into the loop of
-- their caller, so their samples are taken in compiled code, where only
-- the trace's snapshots know them.
-- Arguments: FFI_LIB ROUNDS on|off lua|ffi
--   lua: lookup and weigh read tables (their own guards and lines);
--   ffi: spin_a and spin_b call a busy C function through the FFI, 2 : 1,
--        which costs the same with the JIT on and off.
local lib, rounds, mode, kind = arg[1], tonumber(arg[2]), arg[3], arg[4]
assert(lib and rounds and (mode == "on" or mode == "off"), "usage: FFI_LIB ROUNDS on|off lua|ffi")
if mode == "off" then
	jit.off()
end
local ffi = require("ffi")
ffi.cdef("uint64_t ljlog_test_ffi_spin(int64_t n);")
local C = ffi.load(lib)

local data, recs = {}, {}
for i = 1, 1024 do
	data[i] = i * 0.5
	recs[i] = { value = i, weight = (i % 13) + 0.25 }
end

local function lookup(t, i)
	local v = t[i % 1024 + 1]
	local w = t[(i * 7) % 1024 + 1]
	return v + w
end

local function weigh(rec)
	local x = rec.value
	local y = rec.weight
	return x * y
end

local function spin_a(i)
	local r = C.ljlog_test_ffi_spin(2000)
	return tonumber(r) % 3 + i
end

local function spin_b(i)
	local r = C.ljlog_test_ffi_spin(1000)
	return tonumber(r) % 5 + i
end

local function outer_lua(n)
	local s = 0
	for i = 1, n do
		s = s + lookup(data, i)
		s = s + weigh(recs[i % 1024 + 1])
	end
	return s
end

local function outer_ffi(n)
	local s = 0
	for i = 1, n do
		s = s + spin_a(i)
		s = s + spin_b(i)
	end
	return s
end

local total = 0
for _ = 1, rounds do
	if kind == "ffi" then
		total = total + outer_ffi(200)
	else
		total = total + outer_lua(mode == "off" and 100000 or 1000000)
	end
end
print(total > 0)
