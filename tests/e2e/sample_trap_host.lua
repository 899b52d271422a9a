-- ljlog e2e trap: the Lua part of sample_host's rounds (sample_host.c),
-- between which the host thread runs C code and sleeps, no Lua running.
-- Called with (K, ROUND); returns a number.
local k, round = ...
local s = 0
for i = 1, 200000 do
	s = (s * 31 + i + k + round) % 1000003
end
return s
