-- ljlog e2e: functions defined when a chunk is loaded and called later,
-- for the names of sample-only logs (names_sample.sh). Two Lua modules,
-- both loaded before the work starts: names_gone's chunk is collected
-- (its bytecode is gone when its functions are first sampled),
-- names_kept's chunk is kept alive by this program; and a C module whose
-- functions have no dynamic symbol, loaded after ljlog attached.
-- Each function then burns CPU for about ROUNDS * 10 ms, in turn.
-- Usage: names_sample.lua DIR ROUNDS   (DIR holds the two modules)
local dir, rounds = arg[1], tonumber(arg[2]) or 10
package.path = dir .. "/?.lua;" .. package.path

local gone = require("names_gone")
local kept_chunk = assert(loadfile(dir .. "/names_kept.lua"))
local kept = kept_chunk()
collectgarbage()
collectgarbage()
local cmod = require("names_cmod")

-- Each call below burns about 10 ms (a calibrated count of rounds).
local function per10ms(f)
	local n = 1000
	while true do
		local t0 = os.clock()
		f(n)
		local dt = os.clock() - t0
		if dt > 0.005 then
			return math.floor(n * 0.010 / dt) + 1
		end
		n = n * 2
	end
end

local work = {
	{ "names_gone.spin", function(n) return gone.spin(n) end },
	{ "names_gone:meth", function(n) return gone:meth(n) end },
	{ "gone_global", function(n) return gone_global(n) end },
	{ "names_kept.step", function(n) return kept.step(n) end },
	{ "cmod.work", function(n) return cmod.work(n) end },
	{ "cmod.inner.spin", function(n) return cmod.inner.spin(n) end },
}
local sum = 0
for _, w in ipairs(work) do
	-- The first calibration also pays for compiling the code (the JIT's,
	-- and qemu's when the program runs under it): measure again.
	per10ms(w[2])
	local n = per10ms(w[2])
	for _ = 1, rounds do
		local r = w[2](n)
		sum = sum + (r > 0 and 1 or 0)
	end
end
print("done", sum)
