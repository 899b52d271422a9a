-- ljlog e2e: sampling started and stopped from Lua, twice, with busy work
-- before, during and long after; nothing of the sampler may act once
-- stopped. Prints the work's result, and on stderr "threads A B C": the
-- process's threads before the first start, while sampling, and after the
-- last stop (then more busy work).
-- Arguments: LOG1 LOG2 [off] (off: the JIT off).
local ljlog = require("ljlog")
local log1, log2 = arg[1], arg[2]
assert(log1 and log2, "usage: LOG1 LOG2 [off]")
if arg[3] == "off" then
	jit.off()
end

-- The process's threads, from /proc (no child process: it would inherit
-- LD_PRELOAD, and under qemu-user the shells are of another machine).
local function threads()
	local f = assert(io.open("/proc/self/status"))
	local n = tonumber(f:read("*a"):match("\nThreads:%s*(%d+)"))
	f:close()
	return assert(n, "no Threads: line in /proc/self/status")
end

local function busy(n)
	local s, t = 0, {}
	for i = 1, n do
		s = (s * 31 + i) % 1000003
		t[i % 64 + 1] = s
		if i % 1000 == 0 then
			s = s + #tostring(s) + select("#", unpack(t, 1, 8))
		end
	end
	return s
end

local before = threads()
local r = busy(2e6)
assert(ljlog.start("sample=100us,wall,file=" .. log1))
r = r + busy(6e6)
local during = threads()
assert(ljlog.stop())
r = r + busy(6e6)
assert(ljlog.start("sample=100us,wall,file=" .. log2))
r = r + busy(6e6)
assert(ljlog.stop())
assert(not ljlog.running())
-- Long after: a sampler left running would take signals now.
for _ = 1, 5 do
	r = r + busy(4e6)
end
io.stderr:write(string.format("threads %d %d %d\n", before, during, threads()))
print(r)
