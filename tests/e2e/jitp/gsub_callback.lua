-- ljlog differential corpus: gsub_callback.
-- Case: a C library function calling back into Lua. rewrite() calls
-- string.gsub(text, "%a+", on_word): gsub's own matching runs in C, with
-- rewrite the innermost Lua function on the stack, and calls on_word() for
-- every word, a Lua function with work of its own (string bytes and
-- arithmetic). Note: jit.profile takes its samples at the next bytecode
-- boundary, so time in gsub's C code lands mostly on on_word (the next Lua
-- code to run), not on rewrite; a profiler charging the C time to the
-- innermost Lua frame gives rewrite a share instead. count_words() uses string.gmatch with a Lua loop
-- (the iterator runs in C between the loop's iterations). LuaJIT does not
-- compile gsub with a function argument or gmatch, so traces are few.
-- No designed split.
-- Scale 1 (measured): about 0.46 s of CPU with the JIT on, 0.70 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local byte = string.byte
local TEXT = string.rep("tracing compilers record hot loops and guard their assumptions; "
	.. "sampling profilers interrupt the program and walk its stack. ", 30)

local state = 0

local function on_word(w)
	local h = state
	for i = 1, #w do
		h = (h * 31 + byte(w, i)) % 65521
	end
	state = h
	if h % 5 == 0 then
		local u = w:upper()
		return u
	end
	return nil
end

local function rewrite(text)
	local out, n = string.gsub(text, "%a+", on_word)
	return #out + n
end

local function count_words(text)
	local n, len = 0, 0
	for w in string.gmatch(text, "%a+") do
		n = n + 1
		len = len + #w
	end
	return n * 1000 + len % 1000
end

local rounds = math.max(1, math.floor(6000 * SCALE + 0.5))
local x = 0
for _ = 1, rounds do
	x = (x + rewrite(TEXT) + count_words(TEXT) + state) % 1000000007
end
print(string.format("gsub_callback rounds=%d x=%d", rounds, x))
