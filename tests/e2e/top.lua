-- ljlog e2e: known calls for 'ljlog top'. Arguments: N. leaf() and spin()
-- are each called exactly N times (not as tail calls); leaf allocates a
-- table each time.
local n = assert(tonumber((...)), "usage: top.lua N")

local function leaf(i)
	local t = { i, i + 1, i + 2 }
	return t
end

local function spin(k)
	local s = 0
	for i = 1, k do
		s = s + i
	end
	return s
end

local sum = 0
for i = 1, n do
	local t = leaf(i)
	local s = spin(300)
	sum = sum + #t + s
end
io.write(string.format("top.lua %d %d\n", n, sum))
