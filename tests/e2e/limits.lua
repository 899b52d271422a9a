-- ljlog e2e: a program whose log outgrows a small limit (tests/e2e/limits.sh).
-- Calls and allocations enough for a few MB of log with calls,alloc; prints
-- a checksum that depends on all of its work, then "done": the profiled run
-- must print the same lines and exit 0 whatever happens to the log.
-- Argument LOG (optional): halfway, the program lowers its own file-size
-- limit (setrlimit RLIMIT_FSIZE, through the FFI) to LOG's size + 40000
-- bytes, below what the log will need: the writer, which read the limit at
-- start, then meets EFBIG and SIGXFSZ for real.
local logpath = ...

local function lower_limit()
	local ffi = require("ffi")
	ffi.cdef([[
		struct ljlog_rlimit { unsigned long cur, max; };
		int setrlimit(int resource, const struct ljlog_rlimit *rl);
	]])
	local f = assert(io.open(logpath, "rb"))
	local size = f:seek("end")
	f:close()
	local rl = ffi.new("struct ljlog_rlimit", size + 40000, size + 40000)
	assert(ffi.C.setrlimit(1 --[[ RLIMIT_FSIZE ]], rl) == 0, "setrlimit")
end
local function word(i)
	return string.format("w%d", i % 977)
end

local function count(t, w)
	t[w] = (t[w] or 0) + 1
end

local sum = 0
for round = 1, 40 do
	if round == 20 and logpath then
		lower_limit()
	end
	local t = {}
	for i = 1, 5000 do
		count(t, word(i * round))
	end
	for w, n in pairs(t) do
		sum = (sum + #w * n) % 1000000007
	end
end
print("checksum " .. sum)
io.stdout:write("done\n")
