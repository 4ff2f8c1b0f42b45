-- The compare-and-append script (audit/redis/commit.py).
--
-- KEYS: the log, the head, the archive base, the tree, the table's key states (key id ->
-- live | retired), the last signed checkpoint ("<size> <root hex>"), the table's client
-- seeds (client seed -> "<seq> <chain>": the seq of the first roll that used it and the
-- seq that committed that roll's chain; a bare "<seq>" was written before chains were
-- kept), then the idempotency markers and seed sessions of the batch (an anchor at or
-- below the base was archived, not lost).
--
-- ARGV: the head the batch was chained on, the new head, this process's anchor (seq and
-- seq:hash of the last entry it acknowledged or read; 0 and "" for none), the markers'
-- time to live, the time (ms), the tree's length in bytes before the batch and the hashes
-- the batch adds to it, the key id the batch publishes in the table (its first entry
-- carries the certificate; "" none), the checkpoint of the tree after the batch ("<size>
-- <root hex>": recorded as the last signed, and refused, as the log going back, if one as
-- large was signed already), whether to run the maxmemory guard ("1") or not ("0": the
-- process saw Redis far from full a moment ago, append.py's MemoryGuard), then nine
-- values per entry: stream id, JCS bytes deflated, hash prefix, marker key index (0:
-- none), request fingerprint, session key index (0: none), claim kind (c commit, n renew,
-- r roll, v reveal, p key published, x key retired), claim value (commit: "<server seed>
-- <commitment> <chain length>", 0 for a commit-reveal session; renew: "<nonce> <last
-- link> <anchor> <chain length>"; roll: "<nonce> <client seed>"; reveal: "<nonce>
-- <revealed_by>"; x: the key id) and what the roll showed of its session's token ("": not
-- checked here; "!": none, and the session's token is required; "?": none, which only a
-- session never bound takes; else the SHA-256 hex of the token shown, which must be the
-- session's, and binds it). A session without a token (from before tokens) takes any.
-- The token is checked before the Idempotency-Key and the claim, and refused with
-- nothing written; a session's first roll with its token marks it bound. A hash-chain
-- session's current chain covers nonces start .. start + length - 1: a roll past it is
-- refused (spent), and a renew is taken only at its end. A roll whose client seed a roll
-- of this table used at a seq before the entry that committed the roll's chain (its
-- session.commit, or the session.renew of its current chain) is refused (reused): the
-- server knew that client seed when it drew the chain, and could have ground the chain
-- for it. So is a roll whose client seed a roll used on another chain, wherever the
-- chains stand: a server holding several committed chains could pick the one that
-- grinds a seed it already saw (a client seed belongs to one chain).
--
-- Replies: {1, head} stored; {0, head, key states, frontier...} the head moved (re-chain
-- on it); {2, head} the anchor is gone or changed (the log went back or was forked: stop),
-- or the entry the head names is not the log's last (its tail deleted: stop); {3, i,
-- marker} entry i's Idempotency-Key is already done; {4, i, why, nonce} entry i's
-- claim is refused (unknown, exists, revealed, spent or moved: the session is at nonce;
-- reused: then also the seq of the client seed's first use and of the chain's commit); {5,
-- head} the tree does not match the head (a table from before trees); {6, used, max}
-- Redis holds 95 % of its maxmemory or more (append.py's FULL_RATIO): refused before any
-- write, so a write never fails half-way on an out-of-memory error; {7, i, why} entry i's
-- session token is refused (missing or wrong). Stored after the guard ran, the reply is
-- {1, head, used, max}: the process learns how full Redis is from the check it asked
-- for. Nothing is stored unless the reply is 1. (A batch never carries one key twice.)
local head = redis.call('GET', KEYS[2]) or ''
if ARGV[3] ~= '0' and ARGV[4] ~= head then
  local rows = redis.call('XRANGE', KEYS[1], ARGV[3] .. '-0', ARGV[3] .. '-0')
  local base = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0')
  if #rows == 0 and tonumber(ARGV[3]) > base then return {2, head} end
  if #rows > 0 then
    local fields = rows[1][2]
    local want = string.sub(ARGV[4], #ARGV[3] + 2, #ARGV[3] + 1 + 16)
    for i = 1, #fields, 2 do
      if fields[i] == 'h' and fields[i + 1] ~= want then return {2, head} end
    end
  end
end
if head ~= ARGV[1] then
  return frontier(seq_of(head), {0, head, redis.call('HGETALL', KEYS[5])})
end
-- The entry the head names must be the log's last: a tail deleted under an unchanged
-- head would have the batch appended after a hole. Fail closed, as the log going back.
local at = seq_of(head)
if at > tonumber(redis.call('HGET', KEYS[3], 'seq') or '0') then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #last == 0 or last[1][1] ~= at .. '-0' then return {2, head} end
end
if redis.call('STRLEN', KEYS[4]) ~= tonumber(ARGV[7]) then return {5, head} end
local memory = nil
if ARGV[11] == '1' then
  memory = redis.call('INFO', 'memory')
  local limit = tonumber(string.match(memory, 'maxmemory:(%d+)') or '0')
  local used = tonumber(string.match(memory, 'used_memory:(%d+)') or '0')
  if limit > 0 and used >= limit * 0.95 then return {6, tostring(used), tostring(limit)} end
  memory = {tostring(used), tostring(limit)}
end
local signed = redis.call('GET', KEYS[6])
if signed then
  local size = tonumber(string.match(signed, '^(%d+) '))
  if size >= tonumber(string.match(ARGV[10], '^(%d+) ')) then return {2, head} end
end
local sessions = {}
local binds = {}
local first_use = {}
local chains = {}
local n = 0
for i = 12, #ARGV, 9 do
  n = n + 1
  local s = tonumber(ARGV[i + 5])
  local kind = ARGV[i + 6]
  local state = nil
  if s > 0 and kind ~= 'p' and kind ~= 'x' then
    state = sessions[s]
    if not state then
      local f = redis.call('HMGET', KEYS[s], 'nonce', 'revealed', 'start', 'length',
        'commit_seq', 'renew_seq', 'token', 'bound')
      state = {nonce = tonumber(f[1]), revealed = f[2] == '1', start = tonumber(f[3] or '1'),
        length = tonumber(f[4] or '0'), chain = tonumber(f[6] or f[5] or ''),
        token = f[7] or nil, bound = f[8] == '1'}
      sessions[s] = state
    end
    local shown = ARGV[i + 8]
    if shown ~= '' and state.token then
      if shown == '!' or shown == '?' then
        if shown == '!' or state.bound then return {7, n, 'missing'} end
      elseif shown ~= state.token then
        return {7, n, 'wrong'}
      elseif not state.bound then
        state.bound = true
        binds[s] = true
      end
    end
  end
  local marker = tonumber(ARGV[i + 3])
  if marker > 0 then
    local done = redis.call('GET', KEYS[marker])
    if done then
      -- written back unchanged: the round's WAIT / WAITAOF then covers the roll it names
      redis.call('SET', KEYS[marker], done, 'KEEPTTL')
      return {3, n, done}
    end
  end
  if state then
    local seq = tonumber(string.sub(ARGV[i], 1, -3))
    if kind == 'c' then
      if state.nonce then return {4, n, 'exists', state.nonce} end
      state.nonce = 0
      state.chain = seq
    else
      if not state.nonce then return {4, n, 'unknown', 0} end
      if state.revealed then return {4, n, 'revealed', state.nonce} end
      local want = tonumber(string.match(ARGV[i + 7], '^(%d+)'))
      if kind == 'r' then
        if state.nonce ~= want - 1 then return {4, n, 'moved', state.nonce} end
        if state.length > 0 and want > state.start + state.length - 1 then
          return {4, n, 'spent', state.nonce}
        end
        local client = string.match(ARGV[i + 7], '^%d+ (.*)$')
        if client then
          local use = first_use[client]
          if use == nil then
            local kept = redis.call('HGET', KEYS[7], client) or ''
            use = {tonumber(string.match(kept, '^(%d+)') or ''),
              tonumber(string.match(kept, '^%d+ (%d+)$') or '')}
          end
          local first, on = use[1], use[2]
          if first and state.chain and (first < state.chain or (on and on ~= state.chain)) then
            return {4, n, 'reused', state.nonce, first, state.chain}
          end
          if not first then first_use[client] = {seq, state.chain} end
          chains[i] = state.chain
        end
        state.nonce = want
      elseif kind == 'n' then
        if state.length == 0 then return {4, n, 'unknown', state.nonce} end
        if state.nonce ~= want or want ~= state.start + state.length - 1 then
          return {4, n, 'moved', state.nonce}
        end
        state.start = want + 1
        state.length = tonumber(string.match(ARGV[i + 7], '(%d+)$'))
        state.chain = seq
      else
        if state.nonce ~= want then return {4, n, 'moved', state.nonce} end
        state.revealed = true
      end
    end
  end
end
for i = 12, #ARGV, 9 do
  redis.call('XADD', KEYS[1], ARGV[i], 'z', ARGV[i + 1], 'h', ARGV[i + 2])
  local seq = string.sub(ARGV[i], 1, -3)
  local marker = tonumber(ARGV[i + 3])
  if marker > 0 then
    redis.call('SET', KEYS[marker], 'done:' .. ARGV[i + 4] .. ':' .. seq, 'EX', ARGV[5])
  end
  local s = tonumber(ARGV[i + 5])
  if s > 0 then
    local kind, value = ARGV[i + 6], ARGV[i + 7]
    if kind == 'p' then
      redis.call('HSET', KEYS[s], value, 'live')
    elseif kind == 'x' then
      redis.call('HSET', KEYS[s], value, 'retired')
    elseif kind == 'c' then
      local server, commitment, length = string.match(value, '^(%S+) (%S+) (%d+)$')
      redis.call('HSET', KEYS[s], 'server_seed', server, 'commitment', commitment,
        'nonce', 0, 'revealed', 0, 'used', ARGV[6], 'commit_seq', seq, 'start', 1,
        'length', length)
    elseif kind == 'n' then
      local at, server, anchor, length = string.match(value, '^(%d+) (%S+) (%S+) (%d+)$')
      redis.call('HSET', KEYS[s], 'server_seed', server, 'commitment', anchor,
        'start', tonumber(at) + 1, 'length', length, 'used', ARGV[6], 'renew_seq', seq)
    elseif kind == 'r' then
      local nonce, client = string.match(value, '^(%d+) (.*)$')
      redis.call('HSET', KEYS[s], 'nonce', nonce or value, 'used', ARGV[6])
      if client then
        local chain = chains[i]
        redis.call('HSETNX', KEYS[7], client, chain and (seq .. ' ' .. chain) or seq)
      end
    else
      local by = string.match(value, '^%d+ (%S+)$')
      redis.call('HSET', KEYS[s], 'revealed', 1, 'revealed_by', by, 'reveal_seq', seq)
    end
  end
end
for s in pairs(binds) do redis.call('HSET', KEYS[s], 'bound', 1) end
redis.call('APPEND', KEYS[4], ARGV[8])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[5], ARGV[9], 'live') end
redis.call('SET', KEYS[6], ARGV[10])
redis.call('SET', KEYS[2], ARGV[2])
if memory then return {1, ARGV[2], memory[1], memory[2]} end
return {1, ARGV[2]}
