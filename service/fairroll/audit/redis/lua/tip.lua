-- A table's head, its keys' states and its tree's frontier, read together.
-- KEYS: head, log, base, tree, keys (keyspace.tip_keys). Reply: {head, key states,
-- frontier hashes...}.
local head = redis.call('GET', KEYS[1]) or ''
return frontier(seq_of(head), {head, redis.call('HGETALL', KEYS[5])})
