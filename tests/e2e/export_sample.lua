-- ljlog e2e: a hot loop for `ljlog export` with the JIT on (export.sh):
-- samples in compiled traces, allocation sites.
local function work(n)
	local t = {}
	for i = 1, n do
		t[#t + 1] = { i, i * 2 }
		if #t > 1000 then
			t = {}
		end
	end
	return #t
end

local s, t0 = 0, os.clock()
while os.clock() - t0 < 0.3 do
	s = s + work(10000)
end
print(s >= 0)
