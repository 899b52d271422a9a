-- ljlog differential corpus: method_calls.
-- Case: OOP-style objects with metatables and method calls obj:update(dt)
-- over several classes: Body (base class), Spinner (inherits from Body
-- through a metatable __index chain and overrides update, calling the base
-- method explicitly), Counter and Damper (unrelated classes). step_all()
-- calls update on a mixed list, so the call sites are polymorphic; with
-- the JIT on, the method lookups are guarded and the methods inlined.
-- Results are kept integral (fixed-point) so JIT on/off print the same.
-- No designed split.
-- Scale 1 (measured): about 0.41 s of CPU with the JIT on, 2.24 s off.
-- Arguments: [SCALE [off]]  (SCALE multiplies the work; off: jit.off()).
if arg and arg[2] == "off" then jit.off() end
local SCALE = tonumber(arg and arg[1]) or 1

local Body = {}
Body.__index = Body

function Body.new(x, v)
	local o = { x = x, v = v }
	return setmetatable(o, Body)
end

function Body:update(dt)
	self.x = (self.x + self.v * dt) % 100003
	self.v = (self.v * 3 + 1) % 1009
end

function Body:value()
	return self.x
end

local Spinner = setmetatable({}, { __index = Body })
Spinner.__index = Spinner

function Spinner.new(x, v, w)
	local o = Body.new(x, v)
	o.angle, o.w = 0, w
	return setmetatable(o, Spinner)
end

function Spinner:update(dt)
	Body.update(self, dt)
	self.angle = (self.angle + self.w * dt + self.x % 7) % 360
end

function Spinner:value()
	return self.x + self.angle
end

local Counter = {}
Counter.__index = Counter

function Counter.new(step)
	return setmetatable({ n = 0, step = step }, Counter)
end

function Counter:update(dt)
	self.n = (self.n + self.step * dt) % 65536
end

function Counter:value()
	return self.n
end

local Damper = {}
Damper.__index = Damper

function Damper.new(level)
	return setmetatable({ level = level, hist = { 0, 0, 0, 0 } }, Damper)
end

function Damper:update(dt)
	local h = self.hist
	local v = (h[1] + h[2] + h[3] + h[4] + self.level * dt) % 4099
	h[1], h[2], h[3], h[4] = h[2], h[3], h[4], v
end

function Damper:value()
	return self.hist[4]
end

local function make_world(n)
	local objs = {}
	for i = 1, n do
		local kind = i % 4
		if kind == 0 then
			objs[i] = Body.new(i, i % 17)
		elseif kind == 1 then
			objs[i] = Spinner.new(i, i % 13, i % 5 + 1)
		elseif kind == 2 then
			objs[i] = Counter.new(i % 11 + 1)
		else
			objs[i] = Damper.new(i % 7 + 1)
		end
	end
	return objs
end

local function step_all(objs, dt)
	for i = 1, #objs do
		objs[i]:update(dt)
	end
end

local function checksum(objs)
	local s = 0
	for i = 1, #objs do
		s = (s + objs[i]:value()) % 1000000007
	end
	return s
end

local objs = make_world(2000)
local rounds = math.max(1, math.floor(25000 * SCALE + 0.5))
local x = 0
for r = 1, rounds do
	step_all(objs, r % 3 + 1)
	if r % 1000 == 0 then
		x = (x + checksum(objs)) % 1000000007
	end
end
x = (x + checksum(objs)) % 1000000007
print(string.format("method_calls rounds=%d x=%d", rounds, x))
