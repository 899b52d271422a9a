-- ljlog e2e: resume a dead coroutine.
-- coroutine.resume of a dead coroutine returns false and a message; the
-- fast function writes its results into its own frame (over the function
-- slot) before it allocates the message string, which the allocator sees.
local function body(x)
	return x + 1
end
for i = 1, 3 do
	local co = coroutine.create(body)
	assert(coroutine.resume(co, i))
	local ok, msg = coroutine.resume(co)
	assert(not ok and msg:find("dead"))
end
local w = coroutine.wrap(body)
w(1)
assert(not pcall(w))
io.write("deadco.lua done\n")
