-- ljlog e2e: a program that loops until told to stop (heap_trig.sh).
-- arg[1]: a file it creates when it runs; arg[2]: a file whose existence
-- stops it; arg[3] "record": snapshots from the JIT's trace-start event.
-- LOOPT is full (1000 array slots) before the ready file says it runs: a
-- snapshot asked for as soon as it appears must see all of them.
LOOPT = {}
for i = 1, 1000 do LOOPT[i] = {i} end
local f = assert(io.open(arg[1], "w"))
f:write("ready\n")
f:close()
if arg[3] == "record" then
	local ljlog = require "ljlog"
	jit.attach(function(what)
		if what == "start" then assert(ljlog.snapshot()) end
	end, "trace")
end
local n = 0
while true do
	n = n + 1
	LOOPT[n % 1000 + 1] = {n}
	if n % 10000 == 0 then
		local g = io.open(arg[2])
		if g then g:close() break end
	end
end
if arg[3] == "record" then jit.attach(function() end) end
print("stopped")
