-- String-heavy benchmark: building, formatting, splitting and interning
-- strings (JIT on). Usage: luajit strings.lua [N]
local n = tonumber(arg and arg[1]) or 300000
local words = {}
for i = 1, 64 do
	words[i] = string.rep(string.char(96 + i % 26 + 1), i % 7 + 3)
end

local total, seen = 0, {}
for i = 1, n do
	local w = words[i % #words + 1]
	local line = string.format("%s-%d:%s", w, i, w:upper())
	local parts = {}
	for part in line:gmatch("[^:%-]+") do
		parts[#parts + 1] = part
	end
	local joined = table.concat(parts, "/")
	seen[joined:sub(1, 6)] = true
	total = total + #joined + #line:reverse()
end
local keys = 0
for _ in pairs(seen) do keys = keys + 1 end
print(total, keys)
