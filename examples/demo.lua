-- ljlog demo: a small program with the shapes a profile should show:
-- recursion, library calls, allocation, a coroutine, and code made by load().

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

local function producer()
	for i = 1, 200 do
		coroutine.yield(i * i)
	end
end

local function consume()
	local co = coroutine.wrap(producer)
	local sum = 0
	for _ = 1, 200 do sum = sum + co() end
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

local text = build_words(5000)
print("fib(22) =", fib(22))
print("words:", #text, "bytes")
print("coroutine sum:", consume())
print("generated code:", dynamic_code(100))
collectgarbage()
