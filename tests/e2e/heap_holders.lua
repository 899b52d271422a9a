-- ljlog e2e: four caches of N tables, each held one way a program holds
-- memory (heap_leaky.sh): a global, a module's table in package.loaded,
-- an upvalue of a global function, a main-chunk local. With arg 1 "exit"
-- the program ends in os.exit (the main chunk's frame still there);
-- without, the main chunk returns (its locals hold nothing after).
local N = 2000
local function fill(t, tag)
	for i = 1, N do
		t[i] = {tag = tag, i = i, pad = string.rep(tag, 8)}
	end
	return t
end
GCACHE = fill({}, "g")
package.loaded.holdmod = {cache = fill({}, "m")}
local upcache = fill({}, "u")
function lookup(i)
	return upcache[i]
end
local localcache = fill({}, "l")
for i = 1, 1000 do
	local _ = lookup(i % N + 1)
end
print(#localcache)
if arg[1] == "exit" then
	io.stdout:flush()
	os.exit(0)
end
