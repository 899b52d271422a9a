-- ljlog e2e: a program for `ljlog export` (export.sh): calls with a tail
-- call, errors thrown through pcall, coroutines that yield from nested
-- calls (one finished, one left suspended), and enough work for samples.
-- Arguments: [N [W]] (rounds of the main loop, of the sampler's loop).
local N, W = tonumber(arg and arg[1]) or 2000, tonumber(arg and arg[2]) or 15000

local function leaf(n)
	local s = 0
	for i = 1, n do
		s = s + i % 7
	end
	return s
end

local function mid(n)
	return leaf(n) + leaf(n)
end

local function tailer(n)
	return mid(n) -- a tail call: tailer's frame ends here
end

local function thrower(n)
	if n > 0 then
		error("boom")
	end
	return n
end

local function deep(n)
	if n == 0 then
		return thrower(1)
	end
	local r = deep(n - 1)
	return r
end

local function stepper(j)
	mid(20)
	coroutine.yield(j) -- yields from a nested call
	return j
end

local function gen(k)
	for j = 1, k do
		stepper(j)
	end
	return k
end

local sum = 0
for i = 1, N do
	sum = sum + tailer(40)
	assert(not pcall(thrower, 1))
	assert(not pcall(deep, 3)) -- unwinds four frames and thrower
end

local co = coroutine.create(gen)
while coroutine.resume(co, 4) and coroutine.status(co) ~= "dead" do
end
local left = coroutine.create(gen) -- left suspended in stepper
coroutine.resume(left, 3)
coroutine.resume(left)

-- Work for the sampler (a fixed amount: the calls are counted).
for _ = 1, W do
	sum = sum + leaf(1000)
end
print(sum > 0)
