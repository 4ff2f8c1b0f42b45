-- Read a key and write it back unchanged (same value, same TTL).
-- KEYS[1]: the key. Returns its value, or nil (nothing written) if it has none.
-- Why the write: WAIT and WAITAOF confirm the writes of the connection they are sent
-- on, up to its last one. A process that only reads a value another connection wrote
-- (an idempotency marker) has written nothing; after this write, a WAIT or WAITAOF
-- sent next on the same connection covers it, and so every write before it, the
-- value's own included.
local value = redis.call('GET', KEYS[1])
if value then redis.call('SET', KEYS[1], value, 'KEEPTTL') end
return value
