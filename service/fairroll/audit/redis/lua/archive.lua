-- Archive through seq ARGV[1] (hash ARGV[2]): keep the signed base ARGV[3], trim below.
-- KEYS: log, base.
local base = tonumber(redis.call('HGET', KEYS[2], 'seq') or '0')
if tonumber(ARGV[1]) <= base then return 0 end
redis.call('HSET', KEYS[2], 'seq', ARGV[1], 'entry_hash', ARGV[2], 'checkpoint', ARGV[3])
redis.call('XTRIM', KEYS[1], 'MINID', (tonumber(ARGV[1]) + 1) .. '-0')
return 1
