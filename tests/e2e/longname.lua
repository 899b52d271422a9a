-- ljlog e2e: chunk names longer than a screen line.
-- Two chunks whose names share a 400-byte prefix, and a chunk named by
-- its own 2000-byte source, keep their whole names.
local prefix = string.rep("p", 400)
local a = assert(load("return 1", "=" .. prefix .. "A"))
local b = assert(load("return 2", "=" .. prefix .. "B"))
for _ = 1, 2 do
	a()
end
for _ = 1, 3 do
	b()
end
local c = assert(load("return 3 --" .. string.rep("-", 2000)))
for _ = 1, 4 do
	c()
end
io.write("longname.lua done\n")
