-- ljlog e2e: Lua stack overflows caught by pcall, then ordinary calls.
-- The hook counter itself cannot count calls at a stack overflow (its Lua
-- hook needs stack too), so edge.sh only checks that the program runs
-- unchanged, the log is complete and the calls after the overflows count.
local function forever(n)
	return 1 + forever(n + 1)
end
for _ = 1, 3 do
	local ok, msg = pcall(forever, 0)
	assert(not ok and msg:find("stack overflow"))
end
local function after(i)
	return i
end
local n = 0
for i = 1, 77 do
	after(i)
	n = n + 1
end
io.write(string.format("overflow.lua after %d\n", n))
