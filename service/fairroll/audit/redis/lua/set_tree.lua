-- Give a table from before Merkle trees its tree ARGV[2], if its head is still ARGV[1].
-- KEYS: head, tree.
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if redis.call('STRLEN', KEYS[2]) ~= 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
