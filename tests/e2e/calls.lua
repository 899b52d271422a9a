-- ljlog e2e: a deterministic program with many kinds of calls.
-- calls.sh runs it under a debug.sethook counter and under ljlog and
-- compares the per-function call counts. No randomness, no time.

-- Plain recursion.
local function fib(n)
	if n < 2 then
		return n
	end
	return fib(n - 1) + fib(n - 2)
end

-- Tail calls: each level replaces its own frame.
local function countdown(n, acc)
	if n == 0 then
		return acc
	end
	return countdown(n - 1, acc + n)
end

-- Mutual tail recursion between two functions.
local is_odd
local function is_even(n)
	if n == 0 then
		return true
	end
	return is_odd(n - 1)
end
function is_odd(n)
	if n == 0 then
		return false
	end
	return is_even(n - 1)
end

-- Errors unwinding through pcall, from a few levels down.
local function thrower(depth)
	if depth == 0 then
		error("boom")
	end
	return 1 + thrower(depth - 1)
end

local function guarded(i)
	local ok, msg = pcall(thrower, i % 4)
	assert(not ok and msg:find("boom"))
	return ok
end

-- Varargs.
local function sum(...)
	local s = 0
	for i = 1, select("#", ...) do
		s = s + (select(i, ...))
	end
	return s
end

local function forward(...)
	return sum(...)
end

-- A coroutine that yields from a nested call.
local function inner_yield(i)
	coroutine.yield(i)
	return i
end

local function producer(n)
	for i = 1, n do
		inner_yield(i)
	end
	return "done"
end

local function consume(n)
	local co = coroutine.create(producer)
	local got = 0
	while true do
		local ok, v = coroutine.resume(co, n)
		assert(ok, v)
		if v == "done" then
			break
		end
		got = got + v
	end
	return got
end

-- coroutine.wrap, with the generator in a closure.
local function gen(n)
	return coroutine.wrap(function()
		for i = 1, n do
			coroutine.yield(i)
		end
	end)
end

-- Library functions called from Lua.
local function build(n)
	local t = {}
	for i = 1, n do
		table.insert(t, string.rep("x", i % 5))
	end
	return t
end

-- Methods and closures.
local Acc = {}
Acc.__index = Acc
function Acc.new()
	return setmetatable({ n = 0 }, Acc)
end
function Acc:add(x)
	self.n = self.n + x
	return self
end

local function make_adder(k)
	return function(x)
		return x + k
	end
end

-- Metamethods that are Lua functions.
local V = setmetatable({}, {
	__index = function(t, k)
		return k * 2
	end,
	__call = function(self, a)
		return a + 1
	end,
})

local total = 0
for i = 1, 20 do
	total = total + fib(i % 12)
end
for i = 1, 30 do
	total = total + countdown(i * 3, 0)
end
for i = 1, 25 do
	if is_even(i) then
		total = total + 1
	end
end
for i = 1, 40 do
	guarded(i)
end
for i = 1, 35 do
	total = total + forward(i, i + 1, i + 2) + sum()
end
for i = 1, 12 do
	total = total + consume(i)
end
for i = 1, 9 do
	for v in gen(i) do
		total = total + v
	end
end
for i = 1, 15 do
	total = total + #build(i)
end
local a = Acc.new()
for i = 1, 50 do
	a:add(i)
end
local adders = {}
for i = 1, 10 do
	adders[i] = make_adder(i)
end
for i = 1, 60 do
	total = total + adders[i % 10 + 1](i)
end
for i = 1, 16 do
	total = total + V[i] + V(i)
end
io.write(string.format("calls.lua total %d acc %d\n", total, a.n))
