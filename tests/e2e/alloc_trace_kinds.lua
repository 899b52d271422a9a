-- A loop whose trace starts with numeric work (no snapshot of ljlog's
-- there), then allocates in three ways: a concatenation makes a string
-- (line 13), a table constructor a table (line 14), and stores past the
-- end of an array grow it (line 16). alloc_trace.sh checks that each is
-- charged to its own line when the JIT compiles the loop: the trace
-- switches to a snapshot per line before its first instruction that may
-- allocate.
local keep = {}
local acc = 0
for i = 1, 30000 do
	acc = acc + (i * 3) % 7
	acc = acc - (i % 5)
	local s = "k" .. i
	local t = { acc }
	for j = 2, 9 do
		t[j] = j
	end
	keep[i % 64 + 1] = { s, t }
end
print(acc, #keep)
