-- A loop whose trace inlines two functions that allocate: each of the
-- three table constructors (lines 6, 9 and 15) runs once per iteration.
-- alloc_trace.sh checks each is charged to its own function and line when
-- the JIT compiles the loop.
local function mkpair(a, b)
  return { a, b }
end
local function mkleaf()
  return { }
end
local keep = {}
for i = 1, 30000 do
  if i == 15000 then jit.flush() end -- traces numbered anew, the old ones live on
  local p, l = mkpair(i, i), mkleaf()
  keep[i % 64 + 1] = { p, l }
end
