-- Record a signed checkpoint ARGV[2] ("<size> <root hex>") if the last one is still
-- ARGV[1]. KEYS: the table's signed key.
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
