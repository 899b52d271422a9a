-- ljlog e2e: Lua-first sampled stacks (stacks.sh). A hot Lua loop (compiled
-- to traces), a C function called from Lua on a line of its own, and
-- garbage for the collector.
local function hot(n)
	local s = 0
	for i = 1, n do
		s = s + (i * i) % 7
	end
	return s
end

local function sorter(n)
	local t = {}
	for i = 1, n do
		t[i] = (i * 7919) % n
	end
	table.sort(t) -- STACKS_CCALL
	return t[1]
end

local function garbage(n)
	local t
	for i = 1, n do
		t = { i, tostring(i), { i } }
	end
	return t[1]
end

local t0 = os.clock()
local acc = 0
while os.clock() - t0 < (tonumber(arg and arg[1]) or 1.5) do
	acc = acc + hot(3000000) + sorter(4000) + garbage(4000)
end
io.write(acc > 0 and "" or "x")
