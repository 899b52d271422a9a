-- ljlog e2e: a heap held through compiled code (heap_leaky.sh). A cache is
-- an upvalue of handle, a main-chunk local; run, a global function, calls
-- the function it is given in a hot loop, so that its trace keeps handle
-- as a constant. At exit (the main chunk has returned: its locals hold
-- nothing) only that trace reaches the cache. With arg 1 "global" the
-- cache is also the program's own _G.keep.a.b.c.d.e.cache, a longer path.
local cache = {}
local function handle(k)
	cache[k] = (cache[k] or 0) + 1
end
function run(f, n)
	for i = 1, n do
		f(i % 1000)
	end
end
run(handle, 100000)
if arg[1] == "global" then
	keep = {a = {b = {c = {d = {e = {cache = cache}}}}}}
end
