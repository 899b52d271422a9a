-- ljlog e2e (flame.sh): chunks whose names are markup, for the flame page
-- to show as text: load(code, "=NAME") names the chunk NAME.
local code = [[
local s = 0
for i = 1, 4000000 do
	s = s + i % 7
end
return s
]]
local a = load(code, "=</script><script>alert(1)</script>")
local b = load(code, "=<!-- x --> & <b>bold</b>")
local t = 0
for _ = 1, 8 do
	t = t + a() + b()
end
print(t > 0)
