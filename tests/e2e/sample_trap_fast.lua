-- ljlog e2e trap: samples landing in fast functions mid-call. Tight loops
-- of pcall, xpcall, select, unpack, string.byte, setmetatable, tostring,
-- next and coroutine.wrap round trips, with and without errors.
-- Arguments: ROUNDS [off] (off: the JIT off).
local rounds = assert(tonumber(arg[1]), "usage: ROUNDS [off]")
if arg[2] == "off" then
	jit.off()
end

local select, unpack, pcall, xpcall = select, unpack, pcall, xpcall
local byte, setmetatable, tostring, next = string.byte, setmetatable, tostring, next
local mt = { __index = function(_, k) return k end }
local function thrower(x)
	if x % 3 == 0 then
		error("boom")
	end
	return x
end
local function handler(e)
	return e
end
local args = { 1, 2, 3, 4, 5, 6, 7, 8 }
local str = "abcdefghijklmnopqrstuvwxyz"
local gen = coroutine.wrap(function()
	local i = 0
	while true do
		i = i + 1
		coroutine.yield(i)
	end
end)

local s = 0
for r = 1, rounds do
	for i = 1, 2000 do
		s = s + select("#", unpack(args)) + select(3, unpack(args))
		s = s + byte(str, i % 26 + 1) + #tostring(i)
		local ok, v = pcall(thrower, i)
		s = s + (ok and v or 1)
		ok, v = xpcall(thrower, handler, i + 1)
		s = s + (ok and v or 2)
		local t = setmetatable({}, mt)
		s = s + t[i % 5]
		local k = next(args)
		s = s + k
	end
	s = s + gen()
end
print(s)
