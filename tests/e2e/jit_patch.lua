-- ljlog e2e: line checks patched out of compiled traces (jit_patch.sh).
-- Usage: luajit [-lljlog] jit_patch.lua [plain|jitp] [ROUNDS]
--   plain: as it is (ljlog, if loaded, set line snapshots on);
--   jitp:  LuaJIT's own profiler runs in line mode from the start (its
--          checks must stay: they are how it samples compiled code).
-- A hot loop spans several lines, so its trace has a line check before
-- the guard of `if i > SWITCH`; that branch turns the other way after
-- SWITCH rounds, so a side trace is linked to that guard's exit: LuaJIT
-- then walks the loop trace's machine code, patched NOPs included, to
-- retarget the jump (lj_asm_patchexit).
-- Prints, per trace: "trace N PROF TESTS NOPS" where PROF counts the
-- IR_PROF instructions in LuaJIT's own IR of the trace (jit.util), TESTS
-- the `test byte [hookmask], 0x80; jnz` pairs left in its machine code
-- and NOPS the pairs ljlog wrote in their place; then "exits N": the
-- trace exits taken (a side trace that never gets linked would exit on
-- every round after SWITCH), "rounds N" and "sum S".
local mode = arg[1] or "plain"
local rounds = tonumber(arg[2]) or 300000
local SWITCH = 1000
local util = require("jit.util")
local vmdef = require("jit.vmdef")
local jp
if mode == "jitp" then
	jp = require("jit.p")
	jp.start("l", "/dev/null")
end

local exits = 0
jit.attach(function() exits = exits + 1 end, "texit")

local sum = 0
for i = 1, rounds do
	local x = i * 2
	local y = x + 1
	if i > SWITCH then
		sum = sum + y
	else
		sum = sum - x
	end
end
jit.attach(function() end) -- detach the texit handler

local function count(s, pat)
	local n = 0
	for _ in s:gmatch(pat) do
		n = n + 1
	end
	return n
end

-- asm_prof's pair in the forms emit_rma writes: GC64 [r14+disp32|disp8],
-- else [abs32] or [rip+rel32]; then jnz rel32.
local TESTS = {
	"\65\246\134....\128\15\133",
	"\65\246\70.\128\15\133",
	"\246\4\37....\128\15\133",
	"\246\5....\128\15\133",
}
-- The NOP pairs for a 14, 13, 12 and 11-byte check (longest first: a
-- shorter one is the tail of a longer one).
local NOPS = {
	"\102\15\31\132%z%z%z%z%z\15\31\68%z%z",
	"\15\31\132%z%z%z%z%z\15\31\68%z%z",
	"\15\31\128%z%z%z%z\15\31\68%z%z",
	"\102\15\31\68%z%z\15\31\68%z%z",
}

for tr = 1, 4000 do
	local info = util.traceinfo(tr)
	if info then
		local prof = 0
		for ref = 1, info.nins do
			local _, ot = util.traceir(tr, ref)
			local o = 6 * math.floor(ot / 256)
			if vmdef.irnames:sub(o + 1, o + 6) == "PROF  " then
				prof = prof + 1
			end
		end
		local mc = util.tracemc(tr)
		local tests, nops = 0, 0
		for _, p in ipairs(TESTS) do
			tests = tests + count(mc, p)
		end
		for _, p in ipairs(NOPS) do
			nops = nops + count(mc, p)
			mc = mc:gsub(p, "")
		end
		print(("trace %d %d %d %d"):format(tr, prof, tests, nops))
	end
end
print("exits " .. exits)
print("rounds " .. rounds)
print("sum " .. sum)
if jp then
	jp.stop()
end
