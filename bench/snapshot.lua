-- ljlog benchmark: heap snapshots of a heap of about N objects (bench/run.sh
-- snapshot). arg[1]: N (default 1000000), arg[2]: snapshots (default 3).
local ljlog = require "ljlog"
local n = tonumber(arg[1]) or 1000000
local t = {}
for i = 1, n do t[i] = {} end
for _ = 1, tonumber(arg[2]) or 3 do assert(ljlog.snapshot()) end
