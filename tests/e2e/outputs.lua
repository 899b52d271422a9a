-- ljlog e2e: outputs (outputs.sh). Calls f N times (arg 1), then, if asked
-- (arg 2), lists the descriptors an exec'd program inherits into that file,
-- and prints "done N SUM" last.
local n = tonumber(arg[1]) or 1000
local function f(x)
	local y = x + 1
	return y
end
local s = 0
for i = 1, n do
	s = s + f(i)
end
if arg[2] then
	os.execute("ls -l /proc/self/fd/ > '" .. arg[2] .. "' 2>&1")
end
print("done " .. n .. " " .. s)
