-- Keep a cosignature (audit/redis/cosignatures.py), in one atomic step.
--
-- KEYS: 1 the cosignatures (hash: vkey -> the latest kept, JSON), 2 the cosigners (hash:
-- "n:<name>" -> the vkey the name is bound to, "c:<vkey>" -> the credential it is kept
-- under, "#<credential>" -> how many keys that credential holds), 3 .. 6 the pools of
-- witnesses, write keys, sessions and none (sorted sets: vkey by the ms it was last
-- kept), 7 the cosigned stream (the events).
--
-- ARGV: 1 vkey, 2 name, 3 the credential it comes with ("x" a configured witness, "w" the
-- table's write key, "s:<seed_id>" a session, "a" none), 4 the credential it was kept
-- under as the caller read it ("" none), 5 the index of its pool (3 .. 6), 6 the pool's
-- cap, 7 the credential's cap (0: none), 8 size, 9 time, 10 the cosignature (JSON), 11
-- now (ms), 12 about how many events the stream keeps, 13 the index of the pool of the
-- credential read in 4 (0: none).
--
-- A name is bound to the first key kept under it, and stays bound while the table keeps
-- that cosigner (a cosigner kept with a credential: for good); only a configured witness
-- takes a name over from a key that is not a witness's. A cosigner's credential only
-- ever gets stronger (a relayed copy of its cosignature posted with a weaker one keeps
-- it). A full pool makes room by dropping its stalest cosigner: each kind of credential
-- has a pool of its own, so none crowds out another, and a cosigner kept already is
-- never refused; the witnesses' pool (the operator's configuration) refuses instead.
--
-- Replies: {1} kept; {2} a larger or later cosignature of that key is kept (only its
-- staleness is refreshed); {0, "name", vkey} the name is bound to that other key; {0,
-- "moved"} the key's credential changed since the caller read it (read it again); {0,
-- "credential"} the credential holds its cap of keys; {0, "full"} the witnesses' pool is
-- full.
local vkey, name, credential, held = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local pools = {x = KEYS[3], w = KEYS[4], s = KEYS[5], a = KEYS[6]}

local function forget(other, unbind)
  local kept = redis.call('HGET', KEYS[1], other)
  local was = redis.call('HGET', KEYS[2], 'c:' .. other)
  if was then
    redis.call('ZREM', pools[string.sub(was, 1, 1)], other)
    if redis.call('HINCRBY', KEYS[2], '#' .. was, -1) <= 0 then
      redis.call('HDEL', KEYS[2], '#' .. was)
    end
    redis.call('HDEL', KEYS[2], 'c:' .. other)
  end
  redis.call('HDEL', KEYS[1], other)
  if kept and (unbind or was == 'a') then
    local other_name = cjson.decode(kept).name
    if redis.call('HGET', KEYS[2], 'n:' .. other_name) == other then
      redis.call('HDEL', KEYS[2], 'n:' .. other_name)
    end
  end
end

if (redis.call('HGET', KEYS[2], 'c:' .. vkey) or '') ~= held then return {0, 'moved'} end
local bound = redis.call('HGET', KEYS[2], 'n:' .. name)
if bound and bound ~= vkey then
  local theirs = redis.call('HGET', KEYS[2], 'c:' .. bound) or ''
  if credential ~= 'x' or string.sub(theirs, 1, 1) == 'x' then return {0, 'name', bound} end
  forget(bound, true)
end
local pool = KEYS[tonumber(ARGV[5])]
if held == credential then
  local raw = redis.call('HGET', KEYS[1], vkey)
  if raw then
    local kept = cjson.decode(raw)
    local size, time = tonumber(ARGV[8]), tonumber(ARGV[9])
    if kept.size > size or (kept.size == size and kept.time > time) then
      redis.call('ZADD', pool, ARGV[11], vkey)
      return {2}
    end
  end
else
  local cap = tonumber(ARGV[7])
  if cap > 0 and tonumber(redis.call('HGET', KEYS[2], '#' .. credential) or '0') >= cap then
    return {0, 'credential'}
  end
  if redis.call('ZCARD', pool) >= tonumber(ARGV[6]) then
    if pool == KEYS[3] then return {0, 'full'} end
    forget(redis.call('ZRANGE', pool, 0, 0)[1], false)
  end
  if held ~= '' then
    redis.call('ZREM', KEYS[tonumber(ARGV[13])], vkey)
    if redis.call('HINCRBY', KEYS[2], '#' .. held, -1) <= 0 then
      redis.call('HDEL', KEYS[2], '#' .. held)
    end
  end
  redis.call('HINCRBY', KEYS[2], '#' .. credential, 1)
  redis.call('HSET', KEYS[2], 'c:' .. vkey, credential, 'n:' .. name, vkey)
end
redis.call('HSET', KEYS[1], vkey, ARGV[10])
redis.call('ZADD', pool, ARGV[11], vkey)
redis.call('XADD', KEYS[7], 'MAXLEN', '~', ARGV[12], '*', 'c', ARGV[10])
return {1}
