-- Stored tree hashes by index (ARGV), 32 bytes each. KEYS: the tree.
local out = {}
for i = 1, #ARGV do
  local at = tonumber(ARGV[i]) * 32
  out[i] = redis.call('GETRANGE', KEYS[1], at, at + 31)
end
return out
