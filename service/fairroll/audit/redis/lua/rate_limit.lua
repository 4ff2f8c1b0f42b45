-- One request taken from every token bucket it must fit (a client's, and a write key's
-- when it carries one), or from none (docs in fairroll.api.protection).
-- KEYS: the buckets, each a hash of 'tokens' and 'at' (ms of Redis's own clock, so
-- replicas with skewed clocks share one bucket fairly).
-- ARGV[1]: the capacity, refilled over a minute; ARGV[2]: the cost.
-- Returns {1, 0, tokens left in the first bucket} when taken, or {0, ms until the
-- fullest shortfall is refilled, tokens in the first bucket} when refused. A bucket
-- expires once it would be full again.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local capacity = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local per_ms = capacity / 60000
local wait = 0
local levels = {}
for i = 1, #KEYS do
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens = tonumber(state[1]) or capacity
  local at = tonumber(state[2]) or now
  tokens = math.min(capacity, tokens + math.max(0, now - at) * per_ms)
  levels[i] = tokens
  if tokens < cost then wait = math.max(wait, (cost - tokens) / per_ms) end
end
if wait > 0 then return {0, math.ceil(wait), math.floor(levels[1])} end
for i = 1, #KEYS do
  local left = levels[i] - cost
  redis.call('HSET', KEYS[i], 'tokens', tostring(left), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil((capacity - left) / per_ms) + 1000)
end
return {1, 0, math.floor(levels[1] - cost)}
