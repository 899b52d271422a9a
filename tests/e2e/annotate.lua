-- ljlog e2e (annotate.sh): a hot function load()ed from a string without
-- a name (its source is its chunk name in the log), one load()ed with a
-- name ("=named": no source anywhere), and one in this file (filler()).
local src = "local function hot(n)\n" ..
	"\tlocal s = 0\n" ..
	"\tfor i = 1, n do\n" ..
	"\t\ts = (s * 3 + i) % 1000003\n" ..
	"\tend\n" ..
	"\treturn s\n" ..
	"end\n" ..
	"return hot\n"
local hot = load(src)()
local named = load("local function cold(n)\n\treturn n + 1\nend\nreturn cold\n", "=named")()

local function filler(t)
	for i = 1, 200 do
		t[#t + 1] = {i}
	end
	return t
end

local x, t = 0, {}
for _ = 1, 60 do
	x = x + hot(100000)
	x = named(x)
	filler(t)
end
print(string.format("annotate x %d t %d", x, #t))
