-- ljlog e2e module (names_sample.lua): its chunk is collected before its
-- functions are first sampled.
local M = {}

local function inner(x)
	local s = 0
	for i = 1, x do
		s = (s + i * i) % 1000003
	end
	return s
end

function M.spin(n)
	local r = inner(n)
	return r + 1
end

function M:meth(n)
	local s = 0
	for i = 1, n do
		s = (s * 7 + i) % 999983
	end
	return s + (self and 1 or 0)
end

function gone_global(n)
	local t = {}
	for i = 1, n do
		t[i % 64 + 1] = i
	end
	return #t
end

return M
