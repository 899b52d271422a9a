-- ljlog demo: a small program with the shapes a profile should show:
-- recursion, string building, a sort with a comparator, arithmetic the JIT
-- compiles inline, a coroutine, and code made by load().
-- Usage: luajit demo.lua [SCALE]   (1, the default, runs about half a second)

local scale = tonumber(arg and arg[1]) or 1

local function fib(n)
	if n < 2 then return n end
	return fib(n - 1) + fib(n - 2)
end

local function build_words(n)
	local words = {}
	for i = 1, n do
		words[#words + 1] = string.rep("ab", i % 7 + 1) .. tostring(i)
	end
	return table.concat(words, " ")
end

local function distance(p)
	return math.sqrt(p.x * p.x + p.y * p.y)
end

local function by_distance(n)
	local points = {}
	for i = 1, n do
		points[i] = { x = (i * 7919) % 1000 + 0.5, y = (i * 104729) % 1000 + 0.5 }
	end
	local function closer(a, b) return distance(a) < distance(b) end
	table.sort(points, closer)
	return distance(points[1])
end

local function producer(n)
	for i = 1, n do
		coroutine.yield(i * i)
	end
end

local function consume(n)
	local co = coroutine.wrap(producer)
	local sum = co(n)
	for _ = 2, n do sum = sum + co() end
	return sum
end

local function dynamic_code(k)
	local total = 0
	for i = 1, k do
		local chunk = load("return function(x) return x * " .. i .. " end", "=generated" .. i)()
		total = total + chunk(i)
	end
	return total
end

local text = build_words(200000 * scale)
print("fib(32) =", fib(31 + scale))
print("words:", #text, "bytes")
print("nearest point at", by_distance(150000 * scale))
print("coroutine sum:", consume(300000 * scale))
print("generated code:", dynamic_code(100))
collectgarbage()
