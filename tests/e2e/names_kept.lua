-- ljlog e2e module (names_sample.lua): its chunk is kept alive by the
-- program that loads it.
local M = {}

function M.step(n)
	local s = 0
	for i = 1, n do
		s = s + (i % 13) * (i % 7)
	end
	return s
end

return M
