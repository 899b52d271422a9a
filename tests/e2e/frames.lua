-- ljlog e2e: frames of fast functions (frames.sh). Every shape of loop and
-- builtin call, each followed by calls the caller makes itself: after a
-- fast function that calls nothing back (ipairs' iterator, assert, select,
-- math.floor, ...), the next call belongs to the caller, not to it. Tail
-- calls (`return f(x)`) only where meant; no two functions on one line.
local function work(n)
	local s = 0
	for i = 1, n do
		s = s + i % 7
	end
	return s
end

local function id(x)
	return x
end

local function sq(x)
	return x * x
end

local function ok(x)
	return x ~= nil
end

local function tail(x)
	return sq(x) -- a tail call: sq's caller is tail's caller
end

local function loops(t, m)
	local s = 0
	for _, v in ipairs(t) do
		s = s + work(400000) + sq(v)
	end
	for _, v in pairs(m) do
		s = s + sq(v)
	end
	for _, v in next, m do
		s = s + id(v)
	end
	local k, v = next(m)
	while k do
		s = s + id(v)
		k, v = next(m, k)
	end
	for w in string.gmatch("a b c", "%a") do
		s = s + #id(w)
	end
	return s
end

local function asserts(x)
	local y = assert(id(x))
	local z = work(400000)
	assert(ok(y), "not ok")
	local q = sq(z)
	local r = assert(sq(x), "no square")
	local u = tail(r)
	return y + z + q + u
end

local T = setmetatable({}, {
	__tostring = function(self)
		local v = id("T")
		return v
	end,
})

local function builtins(t)
	local n = select("#", id(1), id(2))
	local a = select(2, id(1), id(2), id(3))
	local u1, u2 = unpack(t, 1, 2)
	local ty = type(id(t))
	local s1 = tostring(id(5))
	local s2 = tostring(T)
	local f = math.floor(sq(2.5))
	local m = math.max(sq(1), sq(2), f)
	local h = math.sqrt(work(3000))
	local l = ("abc"):sub(1, 2):upper()
	local b = l:byte(1)
	local r = ("x"):rep(3)
	local ns = tonumber(id("12"))
	local g = rawget(t, 1)
	local z = sq(n + a + u1 + u2 + #ty + #s1 + #s2 + m + h + b + #r + ns + g)
	return z + id(z)
end

local function boom(x)
	if x then
		error("boom")
	end
	return sq(3)
end

local function handler(e)
	local v = id(e)
	return v
end

-- An error inside pcall leaves the callee's frames open until something at
-- a lower slot: try returns right after, so its EXIT ends them.
local function try(x)
	local good = pcall(boom, x)
	return good
end

local function xtry(x)
	local good = xpcall(boom, handler, x)
	return good
end

local function protected()
	local ok1, r1 = pcall(boom, false)
	local a = sq(r1)
	local e1 = try(true)
	local b = sq(2)
	local ok2, r2 = xpcall(boom, handler, false)
	local c = id(r2)
	local e2 = xtry(true)
	local d = work(10)
	pcall(sq, 4)
	local e = id(5)
	local okt, ty = pcall(type, e)
	local f = id(ty)
	local oka, av = pcall(assert, f, "x")
	local g = sq(#av)
	return a + b + c + d + e + g, ok1, ok2, e1, e2, okt, oka
end

local function gen(n)
	for i = 1, n do
		coroutine.yield(sq(i))
	end
	local v = id(n)
	return v
end

local function coro()
	local co = coroutine.create(gen)
	local s = 0
	for _ = 1, 4 do
		local _, v = coroutine.resume(co, 3)
		s = s + id(v)
	end
	local w = coroutine.wrap(function(a)
		local b = coroutine.yield(sq(a))
		work(10)
		local v = id(b)
		return v
	end)
	local r1 = w(2)
	local r2 = id(r1)
	local r3 = w(r2)
	return s + sq(r3)
end

local proxy = setmetatable({}, {
	__index = function(_, k)
		local v = sq(k)
		return v
	end,
	__call = function(_, x)
		local v = id(x)
		return v
	end,
	__add = function(_, b)
		local v = sq(b)
		return v
	end,
})

local function callbacks()
	local r = ("abc"):gsub("%w", function(c)
		local v = id(c)
		return v
	end)
	local t = { 5, 3, 8, 1, 9, 2 }
	table.sort(t, function(a, b)
		local x = sq(a)
		return x < sq(b)
	end)
	local s = 0
	for i = 1, 3 do
		s = s + proxy[i]
	end
	s = s + proxy(4) + (proxy + 2)
	local mt = getmetatable(proxy)
	local tv = type(mt)
	s = s + sq(#tv)
	return #r + t[1] + s
end

local total = 0
for round = 1, 3 do
	local t = { round, 2, 3, 4, 5, 6, 7, 8 }
	local m = { a = 1, b = 2, c = round }
	total = total + loops(t, m)
	total = total + asserts(round)
	total = total + builtins(t)
	total = total + protected()
	total = total + coro()
	total = total + callbacks()
end
print(total)
