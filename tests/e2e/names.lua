-- ljlog e2e names.sh: one function per way a Lua programmer names one.
local ffi = require("ffi")
ffi.cdef[[int abs(int x); int getpid(void);]]

function gfun(n) return n + 1 end		-- global

local function lfun(n) return n * 2 end		-- local function

local lvar = function(n) return n - 1 end	-- local = function

local M = {}
function M.add(a, b) return a + b end		-- field
function M:get() return self.v end		-- method (self)
M.v = 3

local up
local function setup()
	up = function(n) return n + 3 end	-- stored into an upvalue
end
setup()

local s = 0
for _ = 1, 3 do
	s = s + gfun(1) + lfun(2) + lvar(3) + M.add(1, 2) + M:get() + up(1)
end
for _, v in ipairs({1, 2, 3}) do s = s + v end		-- ipairs (iterator)
for _, v in pairs({a = 1, b = 2}) do s = s + v end	-- pairs
s = s + (next({x = 1}) and 1 or 0)			-- next
for w in string.gmatch("a b c", "%a") do s = s + #w end	-- gmatch iterator
local f = io.open(arg[0], "r")				-- file methods
local text = f:read("*a")
f:close()
s = s + #text
s = s + ffi.C.abs(-4) + (ffi.C.getpid() > 0 and 1 or 0)	-- FFI calls
local t = {1, 2, 3}
table.remove(t)						-- builtin in Lua
require("names_mod")				-- package.loaders
print(s)
