-- ljlog fuzzing: the program whose logs seed the corpus (tests/fuzz/mkcorpus.sh).
-- Short, and touching every event family: calls (Lua, C, fast functions,
-- tail calls, errors), allocations and GC, coroutines, traces with inlined
-- functions (and an abort), timer samples. arg[1]: how long to spin, in
-- ms; arg[2]: how much work (the log's size grows with it).
local ms = tonumber(arg and arg[1]) or 20
local k = tonumber(arg and arg[2]) or 1

local function leaf(x) return x * 2 + 1 end
local function mid(x) return leaf(x) + leaf(x + 1) end
local function tail(n) if n == 0 then return 0 end return tail(n - 1) end

-- A hot loop the JIT compiles, leaf and mid inlined into the trace.
local function hot(n)
	local s = 0
	for i = 1, n do s = s + mid(i) end
	return s
end

-- Allocations: tables and strings, some kept, most garbage.
local keep = {}
local function churn(n)
	for i = 1, n do
		local t = {i, tostring(i), {i}}
		if i % 50 == 0 then keep[#keep + 1] = t end
	end
	return #keep
end

-- Coroutines: yields across a generator, and one that errors.
local function gen(n)
	return coroutine.wrap(function()
		for i = 1, n do coroutine.yield(i) end
	end)
end
local function cosum(n)
	local s = 0
	for v in gen(n) do s = s + v end
	local co = coroutine.create(function() error("boom") end)
	coroutine.resume(co)
	return s
end

-- An aborted trace: a NYI builtin in a loop.
local function nyi(n)
	local s = 0
	for i = 1, n do s = s + #string.rep("x", i % 7) end
	return s
end

local r = 0
r = r + tail(10) + hot(100 * k) + churn(30 * k) + cosum(5 * k) + nyi(20 * k)
pcall(error, "caught")
collectgarbage("step")

-- Spin for the samples, in compiled code and out of it.
local t0 = os.clock()
while (os.clock() - t0) * 1000 < ms do
	r = r + hot(100 * k) + churn(5 * k)
end
io.write(r > 0 and "" or "?")
