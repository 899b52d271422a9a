-- ljlog differential corpus: string_builtins.
-- Case: string library functions that LuaJIT compiles into traces, each in
-- a named function of its own:
--   checksum()  string.byte and string.sub over a text (no allocation for
--               byte; sub creates short strings),
--   label()     string.format("%s-%05d") and `..` concatenation,
--   pad()       string.rep and # (length).
-- run_round() calls the three; the library calls count for the Lua
-- function that makes them (jit.profile never samples inside them).
-- No designed split.
-- Scale 1 (measured): about 0.46 s of CPU with the JIT on, 1.64 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local byte, sub, format, rep = string.byte, string.sub, string.format, string.rep

local TEXT = rep("Profilers sample the stack; tracers record every call. ", 40)

local function checksum(text, n)
	local h, len = 0, #text
	for i = 1, n do
		local j = i % (len - 8) + 1
		local piece = sub(text, j, j + 5)
		h = (h * 31 + byte(text, j) + byte(piece, 3)) % 1000003
	end
	return h
end

local function label(n)
	local h = 0
	for i = 1, n do
		local s = format("%s-%05d", "item", i % 50000) .. ":" .. (i % 7)
		h = (h + #s + byte(s, 7)) % 1000003
	end
	return h
end

local function pad(n)
	local h = 0
	for i = 1, n do
		local s = rep("ab", i % 16 + 1) .. rep(" ", i % 5)
		h = (h + #s) % 1000003
	end
	return h
end

local function run_round(r)
	local a = checksum(TEXT, 160000)
	local b = label(32000)
	local c = pad(80000)
	return (a + b + c + r) % 1000003
end

local rounds = math.max(1, math.floor(80 * SCALE + 0.5))
local total = 0
for r = 1, rounds do
	total = total + run_round(r)
end
print(string.format("string_builtins rounds=%d total=%d", rounds, total))
