-- ljlog e2e: a method called only from one loop (stackedges.sh; issue 38,
-- point 1). grand_total() sums items[i]:total(rate) over 1000 items;
-- Item:total calls a small discount() and tail-calls taxed() (its frame is
-- then gone: taxed's caller is grand_total, in every view). The JIT
-- inlines the three into grand_total's loop, and discount's branch gets a
-- side trace. luajit stackedges.lua [ROUNDS] (default 40000).
local Item = {}
Item.__index = Item

function Item.new(price, qty)
	local self = setmetatable({price = price, qty = qty}, Item)
	return self
end

local function discount(x)
	if x > 100 then
		return x * 0.9
	end
	return x
end

local function taxed(x, rate)
	return x * (1 + rate)
end

function Item:total(rate)
	local s = discount(self.price * self.qty)
	return taxed(s, rate) -- a tail call: Item:total's frame goes
end

local function grand_total(items, rate)
	local s = 0
	for i = 1, #items do
		s = s + items[i]:total(rate)
	end
	return s
end

local items = {}
for i = 1, 1000 do
	items[i] = Item.new(i % 50 + 1, i % 7 + 1)
end
local acc = 0
for _ = 1, tonumber(arg[1] or "40000") do
	acc = acc + grand_total(items, 0.2)
end
print(string.format("%.3f", acc))
