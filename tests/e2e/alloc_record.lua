-- ljlog e2e: ljlog's record handler (alloc: a snapshot per line only in
-- the traces that may allocate) beside the program's own. LuaJIT keeps one
-- jit.attach handler per event: ljlog's chains to the one attached before
-- it and puts it back when it stops. Prints the record events the
-- program's handler saw while ljlog ran, whether its handler is back in
-- LuaJIT's registry after ljlog.stop(), and the IR PROF checks in the
-- traces that allocate (TNEW, TDUP) and in the others.
-- Usage: luajit alloc_record.lua LOG   (LOG "-": ljlog not started)
local ljlog = require("ljlog")

local seen = 0
local function mine()
	seen = seen + 1
end
jit.attach(mine, "record")

local on = arg[1] ~= "-"
if on then
	assert(ljlog.start({ nodefaults = true, alloc = true, file = arg[1] }))
end
local keep, acc = {}, 0
for i = 1, 20000 do
	keep[i % 32 + 1] = { i }
end
for i = 1, 200000 do
	acc = acc + (i * 3) % 7
end
local while_on = seen
if on then
	ljlog.stop()
end

local back = false
for _, v in pairs(debug.getregistry()._VMEVENTS) do
	if v == mine then
		back = true
	end
end
local _, prof = dofile((arg[0]:match("^(.*/)") or "./") .. "jit_prof.lua")
print(while_on, back, prof[true], prof[false], acc > 0)
