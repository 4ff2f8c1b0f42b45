-- Cut a tree back to ARGV[2] bytes if the head is still ARGV[1] (an epoch after a loss
-- that left tree hashes beyond the head). KEYS: head, tree.
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
local keep = tonumber(ARGV[2])
if redis.call('STRLEN', KEYS[2]) > keep then
  redis.call('SET', KEYS[2], redis.call('GETRANGE', KEYS[2], 0, keep - 1))
end
return 1
