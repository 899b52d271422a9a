-- ljlog e2e trap: Lua stacks being reallocated under the sampler. Deep
-- recursion grows the stack again and again (shrunk by full GCs in
-- between), recursion into "stack overflow" is caught by pcall, and
-- coroutines each grow their own deep stack, yielding from the bottom.
-- Arguments: ROUNDS [off] (off: the JIT off).
local rounds = assert(tonumber(arg[1]), "usage: ROUNDS [off]")
if arg[2] == "off" then
	jit.off()
end

local function deep(n, a, b, c)
	if n == 0 then
		return a + b + c
	end
	return 1 + deep(n - 1, a + 1, b, c) -- not a tail call: frames pile up
end

local function overflow(n)
	return 1 + overflow(n + 1)
end

local function co_deep(n)
	if n == 0 then
		coroutine.yield(n)
		return 0
	end
	local r = co_deep(n - 1)
	if n % 1000 == 0 then
		coroutine.yield(n)
	end
	return r + 1
end

local total, errors, yields = 0, 0, 0
for r = 1, rounds do
	total = total + deep(4000 + (r % 7) * 1000, r, 2, 3)
	local ok, err = pcall(overflow, 1)
	if not ok and tostring(err):find("stack overflow", 1, true) then
		errors = errors + 1
	end
	local cos = {}
	for i = 1, 4 do
		cos[i] = coroutine.create(co_deep)
	end
	local live = #cos
	while live > 0 do
		live = 0
		for i = 1, #cos do
			local co = cos[i]
			if coroutine.status(co) == "suspended" then
				local ok2, v = coroutine.resume(co, 3000 + i * 500)
				assert(ok2, v)
				yields = yields + 1
				live = live + 1
			end
		end
	end
	if r % 4 == 0 then
		collectgarbage() -- shrinks the stacks that grew
	end
end
print(total, errors, yields)
