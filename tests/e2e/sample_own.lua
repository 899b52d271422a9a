-- ljlog e2e (sample_own.sh): a program with a large heap whose exit
-- snapshot takes ljlog a while on the program's thread, after a busy
-- loop. Usage: sample_own.lua TABLES SECONDS: the loop runs SECONDS of
-- CPU time, and at least 3 times what the program used before it (on a
-- loaded machine the tables took as long as 0.3 s of the loop).
local n, secs = tonumber(arg[1]) or 300000, tonumber(arg[2]) or 0.3
local keep = {}
for i = 1, n do
	keep[i] = { i }
end

local function busy(k)
	local s = 0
	for i = 1, k do
		s = (s * 31 + i) % 1000003
	end
	return s
end

local t0, r = os.clock(), 0
secs = math.max(secs, 3 * t0)
while os.clock() - t0 < secs do
	r = r + busy(100000)
end
print(#keep, r > 0)
