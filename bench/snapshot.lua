-- ljlog benchmark: heap snapshots of a heap of about N objects (bench/run.sh
-- snapshot). arg[1]: N (default 1000000), arg[2]: snapshots (default 3),
-- arg[3]: "tables" (N empty tables, the default) or "strings" (N / 2
-- tables holding a string each: {s = "string " .. i}).
local ljlog = require "ljlog"
local n = tonumber(arg[1]) or 1000000
local t = {}
if arg[3] == "strings" then
	for i = 1, n / 2 do t[i] = {s = "string " .. i} end
else
	for i = 1, n do t[i] = {} end
end
for _ = 1, tonumber(arg[2]) or 3 do assert(ljlog.snapshot()) end
