-- Keep a cosignature (audit/redis/cosignatures.py), in one atomic step.
--
-- KEYS: 1 the cosignatures (hash: vkey -> the latest kept, JSON), 2 the cosigners (hash:
-- "n:<name>" -> the vkey the name is bound to, "c:<vkey>" -> the credential it is kept
-- under, "#<credential>" -> how many keys that credential holds, "o:<vkey>" -> the
-- origin that placed it in a stranger-fed pool, "@<pool letter>:<origin>" -> how many
-- keys that origin holds in that pool), 3 .. 6 the pools of witnesses, write keys,
-- sessions and none (sorted sets: vkey by the ms it was last kept), 7 the cosigned
-- stream (the events), 8 the seed session hash of the session ARGV 14 names (any key of
-- the table's when it names none).
--
-- ARGV: 1 vkey, 2 name, 3 the credential it comes with ("x" a configured witness, "w" the
-- table's write key, "s:<seed_id>" a session, "a" none), 4 the credential it was kept
-- under as the caller read it ("" none), 5 the pool's cap, 6 the credential's cap (0:
-- none), 7 size, 8 time, 9 the cosignature (JSON), 10 now (ms), 11 about how many events
-- the stream keeps, 12 the poster's origin (a digest of its address; "" none), 13 how
-- many keys one origin holds in the pool (0: no such cap), 14 the credential of the key
-- the name is bound to, as the caller read it ("" none).
--
-- Every field of the cosigners hash belongs to a kept cosigner (its name, credential
-- and origin) or counts kept cosigners: forgetting a cosigner removes all of it, its
-- name's binding included, so the hash holds at most five fields per kept cosigner and
-- the pools' caps bound everything. A name is bound to the first key kept under it,
-- while the table keeps that cosigner. A post with a credential takes a name over from
-- a key kept with none, or with a session that is no longer open (revealed, by request
-- or idle), and a configured witness from any key that is not a witness's (the old one
-- is forgotten): so a stranger's name never locks out a player for good.
-- A cosigner's credential only ever gets stronger (a relayed copy of its cosignature
-- posted with a weaker one keeps it). A full pool makes room by dropping its stalest
-- cosigner: each kind of credential has a pool of its own, so none crowds out another,
-- and a cosigner kept already is never refused; an origin that holds its cap of a pool
-- makes room from its own stalest there, so one address churns only its own places;
-- the witnesses' pool (the operator's configuration) refuses instead.
--
-- Replies: {1} kept; {2} a larger or later cosignature of that key is kept (only its
-- staleness is refreshed); {0, "name", vkey} the name is bound to that other key; {0,
-- "moved"} the key's credential changed since the caller read it (read it again); {0,
-- "credential"} the credential holds its cap of keys; {0, "full"} the witnesses' pool is
-- full.
local vkey, name, credential, held = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local origin, per_origin = ARGV[12], tonumber(ARGV[13])
local pools = {x = KEYS[3], w = KEYS[4], s = KEYS[5], a = KEYS[6]}
local letter = string.sub(credential, 1, 1)
local pool = pools[letter]

local function count_down(field)
  if redis.call('HINCRBY', KEYS[2], field, -1) <= 0 then
    redis.call('HDEL', KEYS[2], field)
  end
end

-- Take a cosigner out of the pool of the credential it was kept under ("was").
local function release(other, was)
  local from = string.sub(was, 1, 1)
  redis.call('ZREM', pools[from], other)
  count_down('#' .. was)
  local placed = redis.call('HGET', KEYS[2], 'o:' .. other)
  if placed then
    count_down('@' .. from .. ':' .. placed)
  end
  redis.call('HDEL', KEYS[2], 'c:' .. other, 'o:' .. other)
end

-- Forget a cosigner: its cosignature, its place, its counts and its name's binding.
local function forget(other)
  local kept = redis.call('HGET', KEYS[1], other)
  local was = redis.call('HGET', KEYS[2], 'c:' .. other)
  if was then
    release(other, was)
  end
  redis.call('HDEL', KEYS[1], other)
  if kept then
    local other_name = cjson.decode(kept).name
    if redis.call('HGET', KEYS[2], 'n:' .. other_name) == other then
      redis.call('HDEL', KEYS[2], 'n:' .. other_name)
    end
  end
end

if (redis.call('HGET', KEYS[2], 'c:' .. vkey) or '') ~= held then return {0, 'moved'} end
local bound = redis.call('HGET', KEYS[2], 'n:' .. name)
if bound and bound ~= vkey then
  if redis.call('HEXISTS', KEYS[1], bound) == 0 then
    -- a binding its cosigner left behind when bindings outlived their cosigners
    redis.call('HDEL', KEYS[2], 'n:' .. name)
  else
    local their_credential = redis.call('HGET', KEYS[2], 'c:' .. bound) or 'a'
    local theirs = string.sub(their_credential, 1, 1)
    local lapsed = false
    if theirs == 's' and letter ~= 'a' then
      if their_credential ~= ARGV[14] then return {0, 'moved'} end
      lapsed = redis.call('EXISTS', KEYS[8]) == 0 or redis.call('HGET', KEYS[8], 'revealed') == '1'
    end
    local stronger = theirs ~= 'x'
      and (letter == 'x' or (letter ~= 'a' and (theirs == 'a' or lapsed)))
    if not stronger then return {0, 'name', bound} end
    forget(bound)
  end
end
if held == credential then
  local raw = redis.call('HGET', KEYS[1], vkey)
  if raw then
    local kept = cjson.decode(raw)
    local size, time = tonumber(ARGV[7]), tonumber(ARGV[8])
    if kept.size > size or (kept.size == size and kept.time > time) then
      redis.call('ZADD', pool, ARGV[10], vkey)
      return {2}
    end
  end
else
  local cap = tonumber(ARGV[6])
  if cap > 0 and tonumber(redis.call('HGET', KEYS[2], '#' .. credential) or '0') >= cap then
    return {0, 'credential'}
  end
  local room = false
  local share = '@' .. letter .. ':' .. origin
  if per_origin > 0 and tonumber(redis.call('HGET', KEYS[2], share) or '0') >= per_origin then
    for _, member in ipairs(redis.call('ZRANGE', pool, 0, -1)) do
      if redis.call('HGET', KEYS[2], 'o:' .. member) == origin then
        forget(member)
        room = true
        break
      end
    end
  end
  if not room and redis.call('ZCARD', pool) >= tonumber(ARGV[5]) then
    if letter == 'x' then return {0, 'full'} end
    forget(redis.call('ZRANGE', pool, 0, 0)[1])
  end
  if held ~= '' then
    release(vkey, held)
  end
  redis.call('HINCRBY', KEYS[2], '#' .. credential, 1)
  redis.call('HSET', KEYS[2], 'c:' .. vkey, credential, 'n:' .. name, vkey)
  if per_origin > 0 then
    redis.call('HSET', KEYS[2], 'o:' .. vkey, origin)
    redis.call('HINCRBY', KEYS[2], share, 1)
  end
end
redis.call('HSET', KEYS[1], vkey, ARGV[9])
redis.call('ZADD', pool, ARGV[10], vkey)
redis.call('XADD', KEYS[7], 'MAXLEN', '~', ARGV[11], '*', 'c', ARGV[9])
return {1}
