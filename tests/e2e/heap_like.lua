-- ljlog e2e: like new objects between two snapshots (heap_top.sh). N
-- suspended coroutines go into a table that snapshot 1 already has, one
-- index each, and one table into another local; `heap --diff 1 2` shows
-- the N as one row ("[*]"), not N rows. luajit heap_like.lua [N]
local ljlog = require("ljlog")
local n = tonumber(arg[1] or "20")
local cos, other = {}, nil
local function park()
	coroutine.yield()
end
assert(ljlog.snapshot()) -- 1
for _ = 1, n do
	local co = coroutine.create(park)
	assert(coroutine.resume(co))
	cos[#cos + 1] = co
end
other = {1, 2, 3}
assert(ljlog.snapshot()) -- 2
print(#cos, #other)
