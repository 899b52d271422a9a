-- ljlog e2e: many short-lived chunks, freed while the profiler runs.
-- Arguments: INDEX OUT [N]. Makes N (default 10000) chunks with
-- load(src, "=chunkNNNNN"), calls chunk i 1 + i % 7 times (each call runs
-- an inner function i % 3 times), drops them and collects garbage often, so
-- prototypes are freed and their addresses reused while ljlog runs.
-- The chunks count their own calls; OUT gets one line per chunk:
--   chunkNNNNN <main calls> <inner calls>
local _, out, n = ...
n = tonumber(n) or 10000
assert(out, "usage: chunks.lua INDEX OUT [N]")

MAIN, INNER = {}, {}

for i = 1, n do
	MAIN[i], INNER[i] = 0, 0
	-- Line 1: the main chunk; line 2: the inner function (firstline 2).
	local src = string.format(
		"local i = %d MAIN[i] = MAIN[i] + 1\n"
			.. "local function inner(x) INNER[i] = INNER[i] + 1 return x end\n"
			.. "for j = 1, i %% 3 do inner(j) end\n",
		i
	)
	local f = assert(load(src, string.format("=chunk%05d", i)))
	for _ = 1, 1 + i % 7 do
		f()
	end
	f = nil
	if i % 250 == 0 then
		collectgarbage()
	end
end
collectgarbage()

local fh = assert(io.open(out, "w"))
for i = 1, n do
	fh:write(string.format("chunk%05d %d %d\n", i, MAIN[i], INNER[i]))
end
fh:close()
