-- ljlog e2e: a small program whose output and exit status must not change
-- when the profiler refuses to start. Prints a sum and whether the JIT
-- compiler is on (ljlog's calls family turns it off), exits with status 7.
local function sq(x)
	return x * x
end
local s = 0
for i = 1, 1000 do
	s = s + sq(i)
end
io.write(string.format("plain.lua sum %d jit %s\n", s, tostring(jit.status())))
io.stdout:flush()
os.exit(7)
