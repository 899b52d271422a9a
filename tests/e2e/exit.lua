-- ljlog e2e: leave through os.exit.
-- Arguments: HOW N. Calls tick() N times, prints N, then exits with
-- os.exit(0) (HOW "exit": the Lua state is not closed) or os.exit(0, true)
-- (HOW "close": the state is closed first).
local how, n = ...
n = assert(tonumber(n), "usage: exit.lua exit|close N")

local function tick(i)
	return i + 1
end
local calls = 0
for i = 1, n do
	tick(i)
	calls = calls + 1
end
io.write(string.format("%d\n", calls))
io.stdout:flush()
if how == "close" then
	os.exit(0, true)
else
	os.exit(0)
end
