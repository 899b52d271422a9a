-- ljlog differential corpus: pcall_error.
-- Case: pcall in a loop. guarded() is called through pcall; it does some
-- arithmetic work (an inner loop) and raises an error (a table value,
-- error(t)) on every 4th call, after its work. On failure, the driver
-- loop run_batch() calls recover(), a handler path with string work of its
-- own (string.format and string.byte over the message). Error unwinding
-- happens inside pcall/error (C): jit.profile charges it to the Lua
-- function on top at the time (guarded or run_batch).
-- No designed split (guarded's loop runs on every call, recover() on one
-- call in four).
-- Scale 1 (measured): about 0.48 s of CPU with the JIT on, 1.09 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local ERR = { code = 0 }

local function guarded(i)
	local x = i
	for k = 1, 100 do
		x = (x * 31 + k) % 65521
	end
	if i % 4 == 0 then
		ERR.code = x
		error(ERR)
	end
	return x
end

local function recover(e, i)
	local msg = string.format("failed item %d with code %05d", i, e.code)
	local h = 0
	for k = 1, #msg do
		h = (h * 7 + msg:byte(k)) % 65521
	end
	for k = 1, 40 do
		h = (h * 3 + k) % 65521
	end
	return h
end

local function run_batch(n, acc)
	for i = 1, n do
		local ok, v = pcall(guarded, i)
		if ok then
			acc = (acc + v) % 1000000007
		else
			acc = (acc + recover(v, i)) % 1000000007
		end
	end
	return acc
end

local rounds = math.max(1, math.floor(50 * SCALE + 0.5))
local acc = 0
for _ = 1, rounds do
	acc = run_batch(10000, acc)
end
print(string.format("pcall_error rounds=%d acc=%d", rounds, acc))
