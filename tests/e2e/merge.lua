-- ljlog e2e: one worker of several (merge.sh). luajit merge.lua K: worker K
-- calls leaf() exactly 1000 * (K + 1) + 5000 times (5000 of them from
-- shared()) and shared() 500 times, makes
-- 64 * (K + 1) tables of 32 array slots at one site, and spins for CPU
-- samples in spin() for 0.1 s of CPU. Every worker runs the same
-- functions, so a merged report has each once, with the workers' sums.
local K = tonumber(arg and arg[1]) or 0

local function leaf(x)
	return x * 3 + 1
end

local function shared(x)
	local s = 0
	for i = 1, 10 do
		s = s + leaf(x + i) -- not a tail call: shared stays on the stack
	end
	return s
end

local keep = {}
local function make(n)
	for i = 1, n do
		keep[#keep + 1] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
			15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
			30, 31, 32}
	end
end

local function spin(seconds)
	local t0, x = os.clock(), 0
	while os.clock() - t0 < seconds do
		for i = 1, 1000 do
			x = (x * 31 + i) % 1000003
		end
	end
	return x
end

local acc = 0
for i = 1, 1000 * (K + 1) do
	acc = acc + leaf(i)
end
for i = 1, 500 do
	acc = acc + shared(i)
end
make(64 * (K + 1))
acc = acc + spin(0.1)
print(string.format("worker %d acc %d tables %d", K, acc, #keep))
