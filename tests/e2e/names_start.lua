-- ljlog e2e names.sh: the profiler started inside a running function
-- (ljlog.start), after the functions it calls were made: their maker, on
-- the stack since before the attach, still names them.
local ljlog = require("ljlog")

local function work(n) return n + 1 end

local function main()
	assert(ljlog.start{calls = true, file = arg[1]})
	local s = 0
	for i = 1, 5 do s = s + work(i) end
	ljlog.stop()
	print(s)
end

main()
