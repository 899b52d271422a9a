-- A loop whose trace starts with numeric work (lines 12 and 13: no
-- snapshot of ljlog's there), then allocates in three ways: a
-- concatenation makes a string (line 14), a table constructor a table
-- (line 15), and stores past the end of its array grow it (lines 16 and
-- 17: LuaJIT grows it at the second). The loop is one root trace.
-- alloc_trace.sh checks that each is charged to its own line when the JIT
-- compiles the loop: the trace switches to a snapshot per line before its
-- first instruction that may allocate (without: lines 14, 15 and 17 all
-- go to line 12).
local keep, acc = {}, 0
for i = 1, 30000 do
	acc = acc + (i * 3) % 7
	acc = acc - (i % 5)
	local s = "k" .. i
	local t = { acc }
	t[2] = i
	t[3] = s
	keep[i % 64 + 1] = { s, t }
end
print(acc, #keep)
