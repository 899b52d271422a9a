-- ljlog e2e: a heap built by construction for the heapsnapshot export
-- (tests/e2e/export_heapsnapshot.sh). With the GC stopped: snapshot 1,
-- then _G.HOLD gets NT tables of NS distinct strings each, then snapshot
-- 2. Prints the bytes the VM's own count grew by while HOLD was built.
jit.off()
local ljlog = require "ljlog"
local NT, NS = tonumber(arg[1]), tonumber(arg[2])
HOLD = false -- _G's slot for HOLD exists before the count

-- Local so that the loop runs in a frame of its own (no tail call).
local function build(tag)
	local h = {}
	for i = 1, NT do
		local t = {}
		for j = 1, NS do
			t[j] = tag .. "-" .. i .. "-" .. j
		end
		h[i] = t
	end
	return h
end

collectgarbage("collect")
collectgarbage("stop")
-- Once first, so that the stack and the temporary buffer have grown.
WARM = build("warm")
local ok1 = ljlog.snapshot()
local before = collectgarbage("count")
HOLD = build("hold")
local after = collectgarbage("count")
local ok2 = ljlog.snapshot()
io.write(string.format("%d %s %s\n", (after - before) * 1024, tostring(ok1),
	tostring(ok2)))
