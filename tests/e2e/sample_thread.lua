-- ljlog e2e: one sampled thread's workload in the C host (host --threads N).
-- Arguments: K (the thread's index) [off] (off: the JIT off). Thread K runs busy code in its own
-- chunk "=threadK" only, so that every sample of its VM must name that
-- chunk (or this file's main chunk, which calls it) and no other thread's.
local k, mode = ...
k = assert(tonumber(k), "usage: sample_thread.lua K [off]")
if mode == "off" then
	jit.off()
end
local src = "local function spin(n)\n"
	.. "  local s = 0\n"
	.. "  for i = 1, n do s = (s * 33 + i) % 1000003 end\n"
	.. "  return s\n"
	.. "end\n"
	.. "return function(rounds, n)\n"
	.. "  local t = 0\n"
	.. "  for _ = 1, rounds do t = t + spin(n) end\n"
	.. "  return t\n"
	.. "end\n"
local work = assert(load(src, "=thread" .. k))()
local t = work(mode == "off" and 40 or 100, 200000)
assert(t > 0)
