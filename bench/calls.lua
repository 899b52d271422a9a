-- Call-heavy benchmark: recursive Lua calls plus library calls, JIT off.
jit.off()
local n = tonumber(arg and arg[1]) or 32
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
local function leaf(x) return x + 1 end
local s = 0
for i = 1, n * 20000 do s = leaf(s) + math.abs(-1) end
print(fib(n), s)
