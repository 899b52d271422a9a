-- ljlog e2e: __gc finalizers that call Lua and library functions.
-- LuaJIT runs no hooks inside finalizers, so neither the hook counter nor
-- ljlog's call hook sees the finalizers' Lua functions; the library
-- functions they call must not appear either.
local function fin(n)
	return string.rep("y", n)
end
for i = 1, 50 do
	local u = newproxy(true)
	getmetatable(u).__gc = function()
		fin(i % 4)
	end
end
collectgarbage()
collectgarbage()
io.write(string.rep("z", 2), " finalizers.lua done\n")
