"""The Redis store of the audit trail: one stream and one head key per table.

Keys share the table's hash tag, so a table lives in one Redis Cluster slot::

    fairroll:{<table>}:log    stream; entry seq N has stream id "N-0", field "z" = the entry's
                              JCS bytes, raw-deflated (field "e": plain JSON, as first stored
                              by version 1), field "h" = the first 16 hex digits of its
                              entry_hash
    fairroll:{<table>}:head   "<seq>:<entry_hash>" of the last entry
    fairroll:{<table>}:tree   the RFC 6962 Merkle tree's stored hashes, 32 bytes each, in
                              ``merkle.stored_index`` order: each append APPENDs its own
    fairroll:{<table>}:signed "<size> <root hex>" of the last checkpoint signed: a new one
                              must be consistent with it (``checkpoint``)
    fairroll:{<table>}:seed:<seed_id>  a seed session (``sessions``): its nonce moves, and
                              it is created and revealed, only by the append that stores the
                              entry saying so
    fairroll:{<table>}:meta   hash: write_key_sha256 (tables created with a write key)
    fairroll:{<table>}:base   hash: seq, entry_hash, checkpoint (JSON): the signed
                              checkpoint the log was archived through (``archive``)
    fairroll:keys             hash key_id -> public key JSON (every key that ever signed)

An append is a compare-and-append Lua script: it adds entries only if the
head is still the one they were chained on, so concurrent writers in any
number of processes never fork the chain or reuse a seq.

Within one process, appends to a table are group-committed: while one batch
is on its way to Redis, further drafts for that table queue up; the next
batch chains all of them (up to ``MAX_BATCH``) in order and sends them in one
script call. Each caller gets its entry only after the script that stored it
succeeded. The head is cached, so the script succeeds first time unless
another process wrote in between; then the batch is re-chained on the head
the script returned and tried again, with jittered back-off.

An answer leaves only once its round is durable: the round's scripts are followed,
in the same write (``PackingConnection.execute_batch``), by ``WAITAOF 1 0`` (Redis
>= 7.2) or rely on ``appendfsync always``, and by ``WAIT`` where replicas are
required (``durability``). A round not confirmed in time is answered 503 "may have
been recorded".

Acknowledged seqs are never re-issued. Each process keeps, per table, an *anchor*:
the last entry it acknowledged or read. The script refuses a batch (and the
process fences the table: 503 for every later append, an alarm metric, a log line)
when the anchor's seq is gone from the stream or holds another hash: the log went
back (a crash that lost the AOF's tail, a restore) or was rewritten, and chaining
on it would hand out seqs that players already hold receipts for.

An idempotency marker (``api.idempotency``) travels with its draft: the script
stores the entry only if the key is not done yet, and marks it
``done:<fingerprint>:<seq>`` in the same atomic step, so a recorded roll is never left
without its marker.

A draft's seed-session *claim* (``entry.Claim``) is checked and done by the same
script: a committed roll is stored only if its session is open and at the nonce just
before the roll's, and moves it on; a commitment creates the session; a reveal closes
it. So nonces are consecutive in log order, a refused roll consumes none, and no roll
follows a reveal.

The script also extends the table's Merkle tree (``merkle``) with the batch's hashes,
computed by the process from the tree's *frontier*, which it caches with the head.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import logging
import random
import secrets
import time
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple, cast

import msgspec
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from fairroll.audit import merkle
from fairroll.audit.checkpoint import DEFAULT_LOG_NAME, Checkpoint, sign_checkpoint
from fairroll.audit.durability import PROBE_SECONDS, Durability, probe
from fairroll.audit.entry import (
    GENESIS_HASH,
    KEY_RETIRE_MECHANIC,
    POLICY_MECHANIC,
    Claim,
    Draft,
    Entry,
    Head,
    TablePolicy,
    canonical,
    jcs,
    leaf_hash,
    now_rfc3339,
)
from fairroll.audit.keyspace import (
    HEAD_PATTERN,
    KEYS_HASH,
    base_key,
    head_key,
    keys_key,
    log_key,
    meta_key,
    session_key,
    signed_key,
    table_of_head,
    tip_keys,
    tree_key,
)
from fairroll.audit.merkle import Frontier
from fairroll.audit.reader import LogReader
from fairroll.audit.signing import PublicKey, Signer, seal
from fairroll.audit.verify import EPOCH_MECHANIC

__all__ = [
    "AlreadyRecordedError",
    "AnyRedis",
    "AppendConflictError",
    "AuditStore",
    "ClaimRefusedError",
    "Marker",
    "PackingConnection",
    "Recorded",
    "StoreUnavailableError",
    "TableFencedError",
    "connect_redis",
]

MAX_ATTEMPTS = 100
MAX_BATCH = 64
CONFLICTS_BEFORE_BACKOFF = 2
CLUSTER_RETRIES = 2
_HEAD_CACHE = 10_000
_META_CACHE = 100_000
#: Tables whose last acknowledged entry a process remembers (about 150 bytes each).
_ANCHORS = 1_000_000
_STORED, _FENCED, _ALREADY_DONE, _CLAIM_REFUSED, _NO_TREE = 1, 2, 3, 4, 5
#: The most seqs one epoch may declare lost (each keeps a placeholder leaf).
MAX_EPOCH_GAP = 100_000

#: Lua helpers: a tree's frontier hashes (KEYS[4]) for a size (``merkle.frontier_indices``).
_FRONTIER_LUA = """
local function stored_index(level, n)
  for _ = 1, level do n = 2 * n + 1 end
  local i = 0
  while n > 0 do i = i + n; n = math.floor(n / 2) end
  return i + level
end
local function frontier(size, out)
  local p, level, start = 1, 0, 0
  while p * 2 <= size do p = p * 2; level = level + 1 end
  while level >= 0 do
    if start + p <= size then
      local at = stored_index(level, start / p) * 32
      out[#out + 1] = redis.call('GETRANGE', KEYS[4], at, at + 31)
      start = start + p
    end
    p = p / 2
    level = level - 1
  end
  return out
end
local function seq_of(head)
  return tonumber(string.match(head, '^(%d+):') or '0')
end
"""

#: A table's head, its keys' states and its tree's frontier, read together. KEYS: head,
#: log, base, tree, keys.
_TIP = (
    _FRONTIER_LUA
    + """
local head = redis.call('GET', KEYS[1]) or ''
return frontier(seq_of(head), {head, redis.call('HGETALL', KEYS[5])})
"""
)

#: The compare-and-append script. KEYS: the log, the head, the archive base, the tree,
#: the table's key states (key id -> live | retired), then the idempotency markers and
#: seed sessions of the batch (an anchor at or below the
#: base was archived, not lost). ARGV: the head the batch was chained on, the new head,
#: this process's anchor (``seq`` and ``seq:hash`` of the last entry it acknowledged or
#: read; ``0`` and ``""`` for none), the markers' time to live, the time (ms), the tree's
#: length in bytes before the batch and the hashes the batch adds to it, the key id the
#: batch publishes in the table (its first entry carries the certificate; "" none), then
#: eight values per entry: stream id, JCS bytes deflated, hash prefix, marker key index
#: (0: none), request fingerprint, session key index (0: none), claim kind (``c`` commit,
#: ``r`` roll, ``v`` reveal, ``x`` key retired) and claim value (commit: "<server seed>
#: <commitment>", roll: the nonce, reveal: "<nonce> <revealed_by>", x: the key id).
#: Replies: ``{1, head}`` stored; ``{0, head, key states, frontier...}`` the head moved
#: (re-chain on it); ``{2, head}`` the anchor is gone or changed (the log went back or was
#: forked: stop); ``{3, i, marker}`` entry i's Idempotency-Key is already done; ``{4, i,
#: why, nonce}`` entry i's claim is refused (``unknown``, ``exists``, ``revealed`` or
#: ``moved``: the session is at ``nonce``); ``{5, head}`` the tree does not match the head
#: (a table from before trees). Nothing
#: is stored unless the reply is 1. (A batch never carries one key twice.)
_APPEND = (
    _FRONTIER_LUA
    + """
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
if redis.call('STRLEN', KEYS[4]) ~= tonumber(ARGV[7]) then return {5, head} end
local sessions = {}
local n = 0
for i = 10, #ARGV, 8 do
  n = n + 1
  local marker = tonumber(ARGV[i + 3])
  if marker > 0 then
    local done = redis.call('GET', KEYS[marker])
    if done then return {3, n, done} end
  end
  local s = tonumber(ARGV[i + 5])
  local kind = ARGV[i + 6]
  if s > 0 and kind ~= 'p' and kind ~= 'x' then
    local state = sessions[s]
    if not state then
      local f = redis.call('HMGET', KEYS[s], 'nonce', 'revealed')
      state = {nonce = tonumber(f[1]), revealed = f[2] == '1'}
      sessions[s] = state
    end
    if kind == 'c' then
      if state.nonce then return {4, n, 'exists', state.nonce} end
      state.nonce = 0
    else
      if not state.nonce then return {4, n, 'unknown', 0} end
      if state.revealed then return {4, n, 'revealed', state.nonce} end
      local want = tonumber(string.match(ARGV[i + 7], '^(%d+)'))
      if kind == 'r' then
        if state.nonce ~= want - 1 then return {4, n, 'moved', state.nonce} end
        state.nonce = want
      else
        if state.nonce ~= want then return {4, n, 'moved', state.nonce} end
        state.revealed = true
      end
    end
  end
end
for i = 10, #ARGV, 8 do
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
      local server, commitment = string.match(value, '^(%S+) (%S+)$')
      redis.call('HSET', KEYS[s], 'server_seed', server, 'commitment', commitment,
        'nonce', 0, 'revealed', 0, 'used', ARGV[6], 'commit_seq', seq)
    elseif kind == 'r' then
      redis.call('HSET', KEYS[s], 'nonce', value, 'used', ARGV[6])
    else
      local by = string.match(value, '^%d+ (%S+)$')
      redis.call('HSET', KEYS[s], 'revealed', 1, 'revealed_by', by, 'reveal_seq', seq)
    end
  end
end
redis.call('APPEND', KEYS[4], ARGV[8])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[5], ARGV[9], 'live') end
redis.call('SET', KEYS[2], ARGV[2])
return {1, ARGV[2]}
"""
)
#: Rounds call the append script by its SHA-1 (EVALSHA): a round of 32 tables sent its
#: 3.7 KB text 32 times, and packing it was the costliest step of the round in Python
#: (benchmarks/roll_cost.py). A Redis that lost its script cache (a restart, SCRIPT
#: FLUSH) answers NOSCRIPT without running anything; the script is loaded and those
#: batches sent again.
_APPEND_SHA = hashlib.sha1(_APPEND.encode()).hexdigest()  # noqa: S324 (Redis's own name)

#: Give a table from before Merkle trees its tree, if its head is still ARGV[1].
_SET_TREE = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if redis.call('STRLEN', KEYS[2]) ~= 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""

#: Cut a tree back to ARGV[2] bytes if the head is still ARGV[1] (an epoch after a loss
#: that left tree hashes beyond the head). KEYS: head, tree.
_TRIM_TREE = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
local keep = tonumber(ARGV[2])
if redis.call('STRLEN', KEYS[2]) > keep then
  redis.call('SET', KEYS[2], redis.call('GETRANGE', KEYS[2], 0, keep - 1))
end
return 1
"""

#: Record a signed checkpoint "<size> <root hex>" if the last one is still ARGV[1].
_SIGNED = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""

#: Archive through seq ARGV[1] (hash ARGV[2]): keep the signed base ARGV[3], trim below.
_ARCHIVE = """
local base = tonumber(redis.call('HGET', KEYS[2], 'seq') or '0')
if tonumber(ARGV[1]) <= base then return 0 end
redis.call('HSET', KEYS[2], 'seq', ARGV[1], 'entry_hash', ARGV[2], 'checkpoint', ARGV[3])
redis.call('XTRIM', KEYS[1], 'MINID', (tonumber(ARGV[1]) + 1) .. '-0')
return 1
"""


class PackingConnection(Connection):
    """redis-py's TCP connection, packing a command into RESP in one pass.

    redis-py re-joins a growing buffer once per argument; a round's 32 script calls of
    about 25 arguments each made that the costliest Python step of an append
    (``benchmarks/roll_cost.py``: 18 µs a call against 7 here). The bytes are the same
    (``tests/test_redis_packing.py`` checks it against redis-py's own packer).
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        if isinstance(first, str):  # "SCRIPT LOAD": the words go as arguments
            args = (*first.encode().split(), *args[1:])
        elif b" " in first:
            args = (*first.split(), *args[1:])
        encoder = self.encoder
        encoding, errors = encoder.encoding, encoder.encoding_errors
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            kind = type(arg)
            if kind is bytes:
                data = arg
            elif kind is str:
                data = arg.encode(encoding, errors)
            elif kind is int:
                data = b"%d" % arg
            else:  # floats, memoryviews, and what redis-py refuses (bools, None)
                data = encoder.encode(arg)  # type: ignore[no-untyped-call]
            out += (b"$%d\r\n" % len(data), data, b"\r\n")
        return [b"".join(out)]

    async def execute_batch(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``calls`` in one write and read their raw replies, an error reply as its
        exception, all within one socket timeout.

        What redis-py's pipeline does, less its machinery: it arms and cancels a timer
        for every reply (and a task for the write), the largest part of a round's CPU
        after the signatures (``benchmarks/roll_cost.py``). Nothing is retried (an append
        must not run twice). A batch that fails, times out or is cancelled part-way
        disconnects, so a connection with replies still unread never serves again.
        """
        try:
            async with asyncio.timeout(self.socket_timeout):
                if not self.is_connected:
                    await self.connect()  # type: ignore[no-untyped-call]
                await self.check_health()  # type: ignore[no-untyped-call]
                await self._send_packed_command([b"".join(self.pack_command(*c)) for c in calls])
                parser: Any = self._parser
                replies = [await parser.read_response() for _ in calls]
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError(f"Timeout in a batch to {self._host_error()}") from None
        except OSError as exc:
            await self.disconnect(nowait=True)
            raise RedisConnectionError(f"Error in a batch to {self._host_error()}: {exc}") from exc
        except BaseException:
            await self.disconnect(nowait=True)
            raise
        if self.health_check_interval:
            self.next_health_check = asyncio.get_running_loop().time() + self.health_check_interval
        return replies


#: A standalone Redis or a Redis Cluster: the store works on either.
AnyRedis = Redis | RedisCluster
CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")


def connect_redis(
    url: str, timeout: float, *, retries: int = 0, max_connections: int | None = None
) -> AnyRedis:
    """A client for ``url``: ``redis://``, ``rediss://``, ``unix://`` name one server;
    ``redis+cluster://host:port`` (or ``rediss+cluster://``) names any node of a Redis
    Cluster, whose topology the client then discovers (redis-py's cluster client).

    ``retries``: commands retried after a dropped connection. Only for clients that
    never append (the compute workers read): a retried append could run twice.
    ``max_connections``: the pool's bound (redis-py's default, 100, when None)."""
    pool: dict[str, Any] = {} if max_connections is None else {"max_connections": max_connections}
    if url.startswith(CLUSTER_SCHEMES):
        return RedisCluster.from_url(
            url.replace("+cluster", "", 1),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # A master that is down answers nothing: fail its tables fast (503), and
            # keep serving the others.
            cluster_error_retry_attempts=1,
            **pool,
        )
    # A TCP connection packs commands in one pass (unix sockets and TLS keep redis-py's).
    packing: dict[str, Any] = (
        {"connection_class": PackingConnection} if url.startswith("redis://") else {}
    )
    return Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
        **packing,
        retry=Retry(NoBackoff(), retries) if retries else None,
        retry_on_error=[RedisConnectionError] if retries else None,
        **pool,
    )


_encoder = msgspec.json.Encoder()
_log = logging.getLogger("fairroll.audit")


class Marker(NamedTuple):
    """An Idempotency-Key the append marks done: the script stores the entry only if
    ``key`` is not already done, and marks it ``done:<fingerprint>:<seq>`` in the same
    atomic step."""

    key: str
    fingerprint: str
    ttl: int


class Recorded(NamedTuple):
    """An entry Redis holds durably, with its RFC 6962 leaf hash (the hash of its JCS
    bytes, which the append computed for the tree: a receipt needs it too)."""

    entry: Entry
    leaf_hash: bytes


class _Pending(NamedTuple):
    draft: Draft
    future: asyncio.Future[Recorded]
    marker: Marker | None
    #: A statement the store adds itself (a key retired): nobody awaits it.
    derived: bool = False


class StoreUnavailableError(Exception):
    """Redis could not be reached or answered with an error.

    ``recorded`` is None where the roll may have been recorded (a timeout after the
    script was sent, or a durability confirmation that did not come), False where it
    certainly was not."""

    def __init__(self, message: str, *, recorded: bool | None = False) -> None:
        super().__init__(message)
        self.recorded = recorded


class AppendConflictError(StoreUnavailableError):
    """Other writers kept moving the head; the entry was not appended."""


class TableFencedError(StoreUnavailableError):
    """The table's log in Redis went back behind, or away from, an entry this process
    acknowledged or read: appending would re-issue or fork acknowledged seqs."""


class ClaimRefusedError(Exception):
    """A draft's seed-session claim was refused by the append: nothing was stored.
    ``why``: ``unknown`` (no such session), ``exists`` (a commitment's id is taken),
    ``revealed`` (closed to rolls) or ``moved`` (another roll took the nonce; the session
    is at ``nonce``)."""

    def __init__(self, why: str, nonce: int) -> None:
        super().__init__(f"seed session claim refused: {why} (at nonce {nonce})")
        self.why = why
        self.nonce = nonce


class AlreadyRecordedError(Exception):
    """The roll's Idempotency-Key was already used by a recorded roll: nothing was stored.
    ``marker`` is what the key holds, ``done:<fingerprint>:<seq>``."""

    def __init__(self, marker: str) -> None:
        super().__init__(marker)
        self.marker = marker


class AuditStore(LogReader):
    """Appends and reads signed entries in Redis."""

    def __init__(
        self,
        redis: AnyRedis,
        signer: Signer,
        *,
        replicas: int = 0,
        allow_unsafe: bool = False,
        on_fence: Callable[[str, int, int], None] | None = None,
        log_name: str = DEFAULT_LOG_NAME,
        root_key_id: str | None = None,
    ) -> None:
        self.redis = redis
        self.signer = signer
        self.log_name = log_name
        #: The pinned root this server's own verifications trust keys from.
        self.root_key_id = root_key_id or signer.certificate.certified_by
        #: Per table: each key's state in its log (``live`` once published there,
        #: ``retired``), read with the head; and the keys retired anywhere (``retire_key``).
        self._key_states: dict[str, dict[str, str]] = {}
        self._retired: set[str] = set()
        self._cluster = isinstance(redis, RedisCluster)
        if self._cluster and replicas:
            raise ValueError(
                "FAIRROLL_REQUIRE_REPLICAS is not supported on Redis Cluster (see durability)"
            )
        self.replicas = replicas
        self.allow_unsafe = allow_unsafe
        self.durability: Durability | None = None
        self._probed_at = -PROBE_SECONDS
        self._on_fence = on_fence
        self._queues: dict[str, list[_Pending]] = {}
        self._flusher: asyncio.Future[None] | None = None
        self._attempts: dict[str, int] = {}
        self._errors: dict[str, int] = {}
        #: Per table, the head this process last saw and its tree's frontier.
        self._heads: dict[str, Head] = {}
        self._frontiers: dict[str, Frontier | None] = {}
        #: Per table in the round being sent: the frontier once the batch is stored and the
        #: entries' leaf hashes, and (their JCS bytes, the tree hashes they add, the tree
        #: length before).
        self._pending_frontiers: dict[str, tuple[Frontier, list[bytes]]] = {}
        self._encoded: dict[str, tuple[list[bytes], bytes, int]] = {}
        #: Per table in the round being sent: whether its batch publishes this server's key.
        self._publishing: dict[str, bool] = {}
        #: Per table, the last checkpoint this process signed or saw recorded.
        self._signed: dict[str, tuple[int, bytes]] = {}
        #: Per table, the last entry this process acknowledged or read: Redis must still
        #: hold it (same seq, same hash) for the table to take appends from this process.
        self._anchors: dict[str, Head] = {}
        #: Tables whose log went back or forked: (anchor seq, head seq Redis showed).
        self.fenced: dict[str, tuple[int, int]] = {}
        self._write_keys: dict[str, tuple[str | None, TablePolicy]] = {}
        self._key_published = False

    async def append(self, draft: Draft, marker: Marker | None = None) -> Entry:
        """Chain, sign and store ``draft``; return the entry once Redis holds it durably."""
        return (await self.record(draft, marker)).entry

    async def record(self, draft: Draft, marker: Marker | None = None) -> Recorded:
        """``append``, answering the entry with its leaf hash."""
        if draft.table in self.fenced:
            raise self._fence_error(draft.table)
        future: asyncio.Future[Recorded] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(draft.table, []).append(_Pending(draft, future, marker))
        if self._flusher is None:
            # The flusher outlives a cancelled caller; it runs while anything is queued.
            self._flusher = asyncio.ensure_future(self._flush())
        return await future

    async def probe_durability(self) -> Durability:
        """Ask Redis what an acknowledged append is worth now (see ``durability``)."""
        self.durability = await probe(
            self.redis, replicas=self.replicas, allow_unsafe=self.allow_unsafe
        )
        self._probed_at = time.monotonic()
        return self.durability

    async def _flush(self) -> None:
        """Commit what is queued, round after round, until nothing is left.

        A round takes up to ``MAX_BATCH`` queued drafts of every table, chains each
        table's batch on that table's head and sends all the batches in one round trip
        (one write of one atomic script call per table, then the durability
        confirmation; on Redis Cluster, one call per table, concurrently, so a table
        whose master is down fails alone). A batch whose head another process moved
        goes back to the front of its table's queue and is re-chained in the next round.
        """
        try:
            while self._queues:
                round_: dict[str, list[_Pending]] = {}
                for table in list(self._queues):
                    queue = self._queues[table]
                    round_[table] = queue[:MAX_BATCH]
                    del queue[:MAX_BATCH]
                    if not queue:
                        del self._queues[table]
                try:
                    retry = await self._commit_round(round_)
                except Exception as exc:  # a bug must fail its callers, never hang them
                    _log.exception("audit append round failed")
                    for table, batch in round_.items():
                        self._forget(table)
                        _fail(
                            batch, StoreUnavailableError(f"audit store error: {exc}", recorded=None)
                        )
                    retry = {}
                for table, batch in retry.items():
                    self._queues[table] = batch + self._queues.get(table, [])
                attempts = min((self._attempts.get(t, 0) for t in retry), default=0)
                if attempts > CONFLICTS_BEFORE_BACKOFF and len(self._queues) == len(retry):
                    # A conflict hands back the head another process just wrote, so a
                    # re-chained batch usually lands at once; only when a table keeps
                    # losing (and nothing else is waiting) back off, briefly, with jitter.
                    ceiling = min(0.005, 0.0002 * 2**attempts)
                    await asyncio.sleep(random.uniform(0, ceiling))  # noqa: S311
        finally:
            self._flusher = None

    async def _prepare(self, round_: dict[str, list[_Pending]]) -> bool:
        """Key published and durability known before a round; False: the round failed."""
        try:
            if not self._key_published:
                await self.publish_key()
            if time.monotonic() - self._probed_at >= PROBE_SECONDS:
                await self.probe_durability()
                self._retired = {k.key_id for k in await self.public_keys() if k.not_after}
        except RedisError as exc:
            error = StoreUnavailableError(f"audit store unavailable: {exc}")
            for batch in round_.values():
                _fail(batch, error)
            return False
        durability = self.durability
        if durability is not None and not durability.accepted:
            error = StoreUnavailableError(f"the audit store is not durable: {durability.detail}")
            for batch in round_.values():
                _fail(batch, error)
            return False
        return True

    async def _commit_round(self, round_: dict[str, list[_Pending]]) -> dict[str, list[_Pending]]:
        """One round trip for every batch; returns the batches to retry."""
        retry: dict[str, list[_Pending]] = {}
        if not await self._prepare(round_):
            return {}
        for table in list(round_):
            if table in self.fenced:
                _fail(round_.pop(table), self._fence_error(table))
                continue
            # A second roll with the same Idempotency-Key waits for the next round, where
            # the first one's marker answers it.
            round_[table], later = _split_repeats(round_[table])
            if later:
                retry[table] = later
        unknown = [table for table in round_ if table not in self._frontiers]
        if unknown:
            for table, value in zip(unknown, await self._get_tips(unknown), strict=True):
                if isinstance(value, BaseException):
                    self._failed(table, round_.pop(table), value, retry)
                elif not self._learn_tip(table, value):
                    _fail(round_.pop(table), self._fence_error(table))
        missing = [t for t in round_ if self._frontiers.get(t) is None]
        for table in missing:  # a table from before trees: build its tree once
            try:
                await self._build_tree(table)
            except (RedisError, ValueError) as exc:
                _fail(round_.pop(table), StoreUnavailableError(f"audit store: {exc}"))
                continue
            retry[table] = round_.pop(table) + retry.get(table, [])
        for table in list(round_):
            batch = self._with_key_statements(table, round_[table])
            if batch is None:
                _fail(round_.pop(table), self._retired_error())
            else:
                round_[table] = batch
        chained = {
            table: self._chain(table, [pending.draft for pending in batch])
            for table, batch in round_.items()
        }
        results, confirmed = await self._run_scripts(
            [(t, self._heads[t], round_[t], entries) for t, entries in chained.items()]
        )
        for (table, batch), result in zip(round_.items(), results, strict=True):
            again = self._settle(table, batch, chained[table], result, confirmed, retry)
            if again:
                retry[table] = again + retry.get(table, [])
        return retry

    def _with_key_statements(self, table: str, batch: list[_Pending]) -> list[_Pending] | None:
        """The batch, after the statements the table's log needs first: a ``key.retire`` of
        each key retired since that the log still holds live. None: this server's own key
        was retired, so it appends nothing. (This server's key, if the log has not
        published it, is published by the certificate its first entry carries: ``_chain``.)"""
        own = self.signer.key_id
        states = self._key_states.get(table, {})
        if own in self._retired or states.get(own) == "retired":
            return None
        batch = [pending for pending in batch if not pending.derived]
        statements: list[_Pending] = []
        statements += [
            _statement(
                table, KEY_RETIRE_MECHANIC, {"key_id": key_id}, Claim(kind="retire", key_id=key_id)
            )
            for key_id in sorted(self._retired)
            if states.get(key_id) == "live" and not _retires(batch, key_id)
        ]
        return statements + batch

    def _retired_error(self) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"this server's signing key {self.signer.key_id} was retired: it signs no more "
            "entries; deploy the new key (FAIRROLL_SIGNING_KEY and its certificate)"
        )

    def _settle(
        self,
        table: str,
        batch: list[_Pending],
        entries: list[Entry],
        result: tuple[int, Any] | BaseException,
        confirmed: str | None,
        retry: dict[str, list[_Pending]],
    ) -> list[_Pending]:
        """Answer a batch's callers from its script's result; returns what to retry."""
        if isinstance(result, BaseException):
            self._failed(table, batch, result, retry)
            return []
        status, current = result
        if status == _STORED:
            head = Head(entries[-1].seq, entries[-1].entry_hash)
            frontier, leaves = self._pending_frontiers.pop(table)
            self._remember(table, head, frontier)
            states = self._key_states.setdefault(table, {})
            if entries[0].certificate is not None:
                states[self.signer.key_id] = "live"
            for pending in batch:
                claim = pending.draft.claim
                if claim is not None and claim.kind == "retire":
                    states[claim.key_id] = "retired"
            self._anchor(table, head)
            self._attempts.pop(table, None)
            self._errors.pop(table, None)
            if confirmed is not None:
                # Stored, but not confirmed on disk (or on enough replicas) in time.
                _fail(batch, StoreUnavailableError(confirmed, recorded=None))
                return []
            for pending, entry, leaf in zip(batch, entries, leaves, strict=True):
                if not pending.future.done():
                    pending.future.set_result(Recorded(entry, leaf))
            return []
        if status == _FENCED:
            self._fence(table, _parse_head(current[0]).seq)
            _fail(batch, self._fence_error(table))
            return []
        self._pending_frontiers.pop(table, None)
        if status == _ALREADY_DONE:
            # One roll's key is done already: it is not stored; the others re-chain on
            # the same head in the next round.
            index, marker = int(current[0]) - 1, _text(current[1])
            pending = batch.pop(index)
            if not pending.future.done():
                pending.future.set_exception(AlreadyRecordedError(marker))
            return batch
        if status == _CLAIM_REFUSED:
            index, why, nonce = int(current[0]) - 1, _text(current[1]), int(current[2])
            pending = batch.pop(index)
            if not pending.future.done():
                pending.future.set_exception(ClaimRefusedError(why, nonce))
            return batch
        if status == _NO_TREE:
            self._frontiers[table] = None
            return batch
        # Another writer moved the head: re-chain on the head Redis holds.
        if not self._learn_tip(table, current):
            _fail(batch, self._fence_error(table))
            return []
        attempts = self._attempts[table] = self._attempts.get(table, 0) + 1
        if attempts >= MAX_ATTEMPTS:
            self._forget(table)
            self._attempts.pop(table, None)
            _fail(batch, AppendConflictError(f"table {table!r} is too busy; nothing was recorded"))
            return []
        return batch

    def _failed(
        self,
        table: str,
        batch: list[_Pending],
        error: BaseException,
        retry: dict[str, list[_Pending]],
    ) -> None:
        """A table's batch met a Redis error. On a cluster, a refused or dropped connection
        is retried (``CLUSTER_RETRIES`` times): the client re-learns the topology after a
        node fails, and calls to healthy masters caught in that moment should not fail.
        A timeout is never retried (the script may have run); it answers 503 and says
        the roll may have been recorded."""
        self._forget(table)
        self._attempts.pop(table, None)
        errors = self._errors.get(table, 0)
        timeout = isinstance(error, RedisTimeoutError)
        transient = isinstance(error, RedisConnectionError) and not timeout
        if self._cluster and transient and errors < CLUSTER_RETRIES:
            self._errors[table] = errors + 1
            retry[table] = batch + retry.get(table, [])
            return
        self._errors.pop(table, None)
        _fail(
            batch,
            StoreUnavailableError(f"audit store unavailable: {error}", recorded=None),
        )

    def _learn(self, table: str, head: Head, frontier: Frontier | None = None) -> bool:
        """Take a head read from Redis; False (and the table fenced) if it is behind this
        process's anchor, or at the anchor's seq with another hash."""
        anchor = self._anchors.get(table)
        if anchor is not None and (
            head.seq < anchor.seq or (head.seq == anchor.seq and head != anchor)
        ):
            self._fence(table, head.seq)
            return False
        self._remember(table, head, frontier)
        return True

    def _learn_tip(self, table: str, tip: list[Any]) -> bool:
        """``_learn`` from a head, its keys' states and its tree's frontier hashes as the
        scripts return them (an empty hash: the table has no tree yet)."""
        head = _parse_head(tip[0] or b"")
        flat = [_text(v) for v in tip[1]] if len(tip) > 1 and isinstance(tip[1], list) else []
        self._key_states[table] = dict(zip(flat[::2], flat[1::2], strict=True))
        hashes = [bytes(h) if not isinstance(h, str) else h.encode() for h in tip[2:]]
        frontier = (
            None
            if any(len(h) != merkle.HASH_SIZE for h in hashes)
            else Frontier.of(head.seq, hashes)
        )
        return self._learn(table, head, frontier)

    def _fence(self, table: str, seen: int) -> None:
        anchor = self._anchors.get(table, Head.empty())
        self.fenced[table] = (anchor.seq, seen)
        self._forget(table)
        _log.error(
            "table %r: Redis holds its log up to seq %d, but this process acknowledged or "
            "read seq %d (%s...); appends to the table are stopped so no acknowledged seq "
            "is re-issued. See docs/operations.md, 'A table's log went back'.",
            table,
            seen,
            anchor.seq,
            anchor.entry_hash[:16],
        )
        if self._on_fence is not None:
            self._on_fence(table, anchor.seq, seen)

    def _fence_error(self, table: str) -> TableFencedError:
        acked, seen = self.fenced[table]
        return TableFencedError(
            f"table {table!r} is stopped: its log in the audit store ends at seq {seen} "
            f"(or was rewritten), behind seq {acked} this server acknowledged; nothing was "
            "recorded. An operator must restore the log or open a new epoch."
        )

    def _anchor(self, table: str, head: Head) -> None:
        anchors = self._anchors
        if table not in anchors and len(anchors) >= _ANCHORS:
            # Forget the oldest half (insertion order) rather than everything.
            for stale in list(itertools.islice(anchors, _ANCHORS // 2)):
                del anchors[stale]
        anchors[table] = head

    async def _get_tips(self, tables: list[str]) -> list[list[Any] | BaseException]:
        """Each table's head and frontier hashes, or the error that fetching them met."""
        calls: list[tuple[str | int, ...]] = [("EVAL", _TIP, 5, *tip_keys(t)) for t in tables]
        if self._cluster:
            return cast(
                list[list[Any] | BaseException],
                await asyncio.gather(
                    *(self.redis.execute_command(*call) for call in calls),
                    return_exceptions=True,
                ),
            )
        pipe = self.redis.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call)
        try:
            return cast(list[list[Any] | BaseException], await pipe.execute(raise_on_error=False))
        except RedisError as exc:
            return [exc] * len(tables)

    async def tip(self, table: str) -> tuple[Head, Frontier]:
        """The table's head and its tree's frontier, read together (a table from before
        trees gets its tree first). Fences like ``head``."""
        if table in self.fenced:
            raise self._fence_error(table)
        for _ in range(MAX_ATTEMPTS):
            raw = await self.redis.eval(_TIP, 5, *tip_keys(table))
            if not self._learn_tip(table, cast(list[Any], raw)):
                raise self._fence_error(table)
            head, frontier = self._heads[table], self._frontiers.get(table)
            if head.seq:
                self._anchor(table, head)
            if frontier is not None:
                return head, frontier
            await self._build_tree(table)
        raise AppendConflictError(f"table {table!r} is too busy to read its tree")

    async def _build_tree(self, table: str) -> None:
        """Give a table from before Merkle trees (format 1) its tree, from its entries."""
        head = _parse_head(await self.redis.get(head_key(table)) or b"")
        if head.seq and await self.base(table) is not None:
            raise ValueError(
                f"table {table!r} was archived before Merkle trees: its tree cannot be built"
            )
        frontier, stored = Frontier.empty(), bytearray()
        async for raw in self.raw_entries(table, until=head.seq):
            entry = msgspec.json.decode(raw)
            while frontier.size + 1 < entry["seq"]:  # seqs an epoch declared lost
                frontier, new = frontier.append(merkle.lost_leaf(frontier.size + 1))
                stored += b"".join(new)
            frontier, new = frontier.append(leaf_hash(jcs(entry)))
            stored += b"".join(new)
        if frontier.size != head.seq:
            raise ValueError(f"table {table!r}: the log does not reach its head")
        await self.redis.eval(
            _SET_TREE, 2, head_key(table), tree_key(table), _head_value(head), bytes(stored)
        )
        self._forget(table)

    def _script_call(
        self, table: str, head: Head, batch: list[_Pending], entries: list[Entry]
    ) -> tuple[Any, ...]:
        last = entries[-1]
        anchor = self._anchors.get(table)
        encoded, tree, before = self._encoded.pop(table)
        keys = [
            log_key(table),
            head_key(table),
            base_key(table),
            tree_key(table),
            keys_key(table),
        ]
        args: list[str | bytes | int] = [
            _head_value(head),
            f"{last.seq}:{last.entry_hash}",
            anchor.seq if anchor else 0,
            _head_value(anchor) if anchor else "",
            max((p.marker.ttl for p in batch if p.marker), default=0),
            int(time.time() * 1000),
            before,
            tree,
            self.signer.key_id if self._publishing.pop(table, False) else "",
        ]
        sessions: dict[str, int] = {}
        for pending, entry, data in zip(batch, entries, encoded, strict=True):
            index = 0
            if pending.marker is not None:
                keys.append(pending.marker.key)
                index = len(keys)
            claim = pending.draft.claim
            session = 0
            if claim is not None and claim.kind == "retire":
                session = 5
            elif claim is not None:
                key = session_key(table, claim.seed_id)
                if key not in sessions:
                    keys.append(key)
                    sessions[key] = len(keys)
                session = sessions[key]
            args += [
                f"{entry.seq}-0",
                _deflate(data),
                entry.entry_hash[:16],
                index,
                pending.marker.fingerprint if pending.marker else "",
                session,
                *_claim_args(claim),
            ]
        return ("EVALSHA", _APPEND_SHA, len(keys), *keys, *args)

    async def _run_scripts(
        self, batches: list[tuple[str, Head, list[_Pending], list[Entry]]]
    ) -> tuple[list[tuple[int, Any] | BaseException], str | None]:
        """Run the compare-and-append script for each table's batch, then the durability
        confirmation, in one round trip: a result or an error per batch, and None if the
        round is confirmed durable (else why not)."""
        calls = [self._script_call(*batch) for batch in batches]
        if not calls:
            return [], None
        results, confirmed = await self._send(calls)
        missing = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
        if missing:  # nothing of these ran: load the script, send them again
            try:
                await self.redis.script_load(_APPEND)
            except RedisError as exc:
                for i in missing:
                    results[i] = exc
            else:
                again, unconfirmed = await self._send([calls[i] for i in missing])
                for i, result in zip(missing, again, strict=True):
                    results[i] = result
                confirmed = confirmed or unconfirmed
        return [_script_result(r) for r in results], confirmed

    async def _send(self, calls: list[tuple[Any, ...]]) -> tuple[list[Any], str | None]:
        """The script calls' raw replies (an error as its exception) and the round's
        durability confirmation (None: confirmed), in one round trip."""
        if self._cluster:
            results = await asyncio.gather(
                *(self.redis.execute_command(*call) for call in calls),
                return_exceptions=True,
            )
            return list(results), None
        mode = self.durability.mode if self.durability else "unsafe"
        wait_ms = self._wait_ms()
        confirmations: list[tuple[Any, ...]] = []
        if mode == "waitaof":
            confirmations.append(("WAITAOF", 1, 0, wait_ms))
        if self.replicas:
            # Acknowledged by the replicas (WAIT), as a replica acks its own fsyncs only
            # about once a second: WAITAOF's replica count would slow every round.
            confirmations.append(("WAIT", self.replicas, wait_ms))
        try:
            results = await self._batch([*calls, *confirmations])
        except RedisError as exc:  # the connection failed: every batch failed
            return [exc] * len(calls), None
        confirmed: str | None = None
        if self.replicas:
            confirmed = self._unconfirmed("wait", results.pop())
        if mode == "waitaof":
            confirmed = self._unconfirmed("waitaof", results.pop()) or confirmed
        return results, confirmed

    async def _batch(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        """The raw replies of ``calls``, sent in one round trip on one connection (an
        error reply as its exception): the store's own batch on a TCP connection
        (``PackingConnection.execute_batch``), else redis-py's pipeline."""
        pool = cast(Redis, self.redis).connection_pool
        if not issubclass(pool.connection_class, PackingConnection):
            pipe = self.redis.pipeline(transaction=False)
            for call in calls:
                pipe.execute_command(*call)
            return cast(list[Any], await pipe.execute(raise_on_error=False))
        connection = cast(PackingConnection, await pool.get_connection())  # type: ignore[no-untyped-call]
        try:
            return await connection.execute_batch(calls)
        finally:
            await pool.release(connection)

    def _wait_ms(self) -> int:
        """How long a round waits for its fsync and replicas: within the socket timeout."""
        pool = cast(Redis, self.redis).connection_pool
        timeout = pool.connection_kwargs.get("socket_timeout") or 2.0
        return max(1, int(float(timeout) * 800))

    def _unconfirmed(self, mode: str, reply: object) -> str | None:
        """None if the WAITAOF / WAIT reply meets the requirement, else why not."""
        if isinstance(reply, BaseException):
            return f"the round's durability was not confirmed: {reply}; it may have been recorded"
        if mode == "waitaof":
            local = int(cast(list[Any], reply)[0])
            if local >= 1:
                return None
            return "the round was not confirmed on disk in time; it may have been recorded"
        acked = int(cast(int, reply))
        if acked >= self.replicas:
            return None
        return (
            f"only {acked} of {self.replicas} replicas acknowledged the round in time; "
            "it may have been recorded"
        )

    def _chain(self, table: str, drafts: list[Draft]) -> list[Entry]:
        """Seal the drafts onto the table's head, and extend its tree's frontier with
        them (kept for the script call and, once stored, as the new frontier)."""
        head, frontier = self._heads[table], self._frontiers[table]
        if frontier is None:  # callers build the tree first (``_commit_round``)
            raise ValueError(f"table {table!r} has no tree yet")
        before = merkle.stored_count(frontier.size) * merkle.HASH_SIZE
        entries, encoded, leaves, tree = [], [], [], bytearray()
        sealed_at = now_rfc3339()
        publish = self._key_states.get(table, {}).get(self.signer.key_id) != "live"
        self._publishing[table] = publish
        for draft in drafts:
            entry = seal(draft, head, self.signer, sealed_at, publish=publish)
            publish = False
            data = canonical(entry)
            leaf = leaf_hash(data)
            frontier, stored = frontier.append(leaf)
            tree += b"".join(stored)
            entries.append(entry)
            encoded.append(data)
            leaves.append(leaf)
            head = Head(entry.seq, entry.entry_hash)
        self._encoded[table] = (encoded, bytes(tree), before)
        self._pending_frontiers[table] = (frontier, leaves)
        return entries

    async def publish_key(self) -> None:
        """Publish this server's public key so any replica can serve it (first use kept)."""
        key = msgspec.structs.replace(self.signer.public_key, not_before=now_rfc3339())
        await self.redis.hsetnx(KEYS_HASH, self.signer.key_id, _encoder.encode(key))
        self._key_published = True

    async def retire_key(self, key_id: str) -> PublicKey | None:
        """Retire a key: recorded in the key set now (every process stops signing with it,
        and adds a ``key.retire`` entry to each table it appends to), and retired at once
        in every table's log here (``retire_in``), so no entry it signs can follow."""
        raw = await self.redis.hget(KEYS_HASH, key_id)
        if raw is None:
            return None
        if key_id == self.signer.key_id:
            raise ValueError("a key is retired by a server holding another (the new) key")
        key = msgspec.json.decode(raw, type=PublicKey)
        if key.not_after is None:
            key = msgspec.structs.replace(key, not_after=now_rfc3339())
            await self.redis.hset(KEYS_HASH, key_id, _encoder.encode(key))
        self._retired.add(key_id)
        return key

    async def tables(self) -> AsyncIterator[str]:
        """Every table with a log (a scan of the heads)."""
        async for raw in self.redis.scan_iter(match=HEAD_PATTERN, count=1000):
            name = _text(raw)
            yield table_of_head(name)

    async def retire_in(self, table: str, key_id: str) -> Entry | None:
        """Append a ``key.retire`` of ``key_id`` to the table's log, unless the log never
        published the key or already retired it."""
        await self.tip(table)
        if self._key_states.get(table, {}).get(key_id) != "live":
            return None
        return await self.append(
            Draft.statement(
                table, KEY_RETIRE_MECHANIC, {"key_id": key_id}, Claim(kind="retire", key_id=key_id)
            )
        )

    async def public_keys(self) -> list[PublicKey]:
        raw = await self.redis.hgetall(KEYS_HASH)
        keys = [msgspec.json.decode(value, type=PublicKey) for value in raw.values()]
        return sorted(keys, key=lambda key: key.key_id)

    async def create_table(self, policy: TablePolicy | None = None) -> tuple[str, str]:
        """A new table with an unguessable id and a write key; only the key's hash is kept.
        A policy other than the default is recorded as the table's first entry."""
        table = "t" + secrets.token_urlsafe(16)
        write_key = "frk_" + secrets.token_urlsafe(32)
        created = await self.redis.hsetnx(meta_key(table), "write_key_sha256", _digest(write_key))
        if not created:  # 128 random bits never collide; refuse rather than overwrite
            raise AppendConflictError("table id collision; try again")
        if policy is not None and policy != TablePolicy():
            # Nobody can roll on the table before this answer gives them its write key.
            await self.redis.hset(meta_key(table), "policy", _encoder.encode(policy))
            await self.append(Draft.statement(table, POLICY_MECHANIC, policy))
        return table, write_key

    async def _meta(self, table: str) -> tuple[str | None, TablePolicy]:
        """A table's write key hash and policy, both set once when the table is made (so
        kept, in a bounded map: a roll costs no extra round trip to learn them)."""
        known = self._write_keys.get(table)
        if known is not None:
            return known
        stored, policy = await self.redis.hmget(meta_key(table), ["write_key_sha256", "policy"])
        meta = (
            None if stored is None else _text(stored),
            TablePolicy() if policy is None else msgspec.json.decode(policy, type=TablePolicy),
        )
        if len(self._write_keys) >= _META_CACHE:
            self._write_keys.clear()
        self._write_keys[table] = meta
        return meta

    async def policy(self, table: str) -> TablePolicy:
        return (await self._meta(table))[1]

    async def key_matches(self, table: str, key: str | None) -> bool | None:
        """None: the table has no write key (open). Else whether ``key`` is its write key."""
        expected, _ = await self._meta(table)
        if expected is None:
            return None
        return key is not None and hmac.compare_digest(expected, _digest(key))

    async def head(self, table: str) -> Head:
        """The table's head in Redis; a head behind what this process acknowledged (or
        read) fences the table and raises, so no checkpoint is signed on it."""
        if table in self.fenced:
            raise self._fence_error(table)
        head = _parse_head(await self.redis.get(head_key(table)) or b"")
        if not self._learn(table, head):
            raise self._fence_error(table)
        if head.seq:
            self._anchor(table, head)
        return head

    async def open_epoch(self, table: str, resume_after: int, reason: str) -> Entry:
        """After a loss that no restore can undo: append a signed ``audit.epoch`` entry at
        seq ``resume_after + 1``, chained on the entry Redis still has, declaring the seqs
        between lost (each gets a placeholder leaf in the tree, ``merkle.lost_leaf``).
        ``resume_after`` must be at least the highest seq any server acknowledged (the
        stopped tables' log lines name it), so no seq is issued twice."""
        head, frontier = await self.tip(table)
        if resume_after < head.seq:
            raise ValueError(f"table {table!r} is at seq {head.seq}, past {resume_after}")
        if resume_after - head.seq > MAX_EPOCH_GAP:
            raise ValueError(f"an epoch declares at most {MAX_EPOCH_GAP} seqs lost")
        request: dict[str, Any] = {
            "lost_after": head.seq,
            "resume_after": resume_after,
            "reason": reason,
        }
        # The entry that published this key may be among the lost: the epoch publishes it.
        publish = self._key_states.get(table, {}).get(self.signer.key_id) != "live"
        draft = Draft.statement(
            table, EPOCH_MECHANIC, request, outcome={"lost": resume_after - head.seq}
        )
        entry = seal(
            draft, Head(resume_after, head.entry_hash), self.signer, now_rfc3339(), publish=publish
        )
        before = merkle.stored_count(frontier.size) * merkle.HASH_SIZE
        # A loss may have left tree hashes of the lost seqs: they give way to placeholders.
        await self.redis.eval(
            _TRIM_TREE, 2, head_key(table), tree_key(table), _head_value(head), before
        )
        tree = bytearray()
        for seq in range(head.seq + 1, resume_after + 1):
            frontier, stored = frontier.append(merkle.lost_leaf(seq))
            tree += b"".join(stored)
        data = canonical(entry)
        frontier, stored = frontier.append(leaf_hash(data))
        tree += b"".join(stored)
        new_head = f"{entry.seq}:{entry.entry_hash}"
        args: list[str | bytes | int] = [_head_value(head), new_head, 0, "", 0, 0, before]
        args += [bytes(tree), self.signer.key_id if publish else ""]
        args += [f"{entry.seq}-0", _deflate(data), entry.entry_hash[:16], 0, "", 0, "", ""]
        keys = [log_key(table), head_key(table), base_key(table)]
        keys += [tree_key(table), keys_key(table)]
        result = _script_result(await self.redis.eval(_APPEND, len(keys), *keys, *args))
        if isinstance(result, BaseException) or result[0] != _STORED:
            raise ValueError(f"table {table!r} moved while the epoch was opened; try again")
        self._forget(table)
        return entry

    async def base(self, table: str) -> Checkpoint | None:
        """The signed checkpoint the table's log was archived through, if it was."""
        raw = await self.redis.hget(base_key(table), "checkpoint")
        return None if raw is None else msgspec.json.decode(raw, type=Checkpoint)

    async def archive(self, table: str, through: int) -> Checkpoint:
        """Trim entries up to seq ``through`` (exported and verified by the caller first),
        keeping a checkpoint signed for that seq, with its tree's frontier, as the log's new
        *base*: the first kept entry chains on its head hash, the tree (kept whole) goes on
        from its frontier, and verifiers start from it. Refused (ValueError) if
        ``through`` is not an entry of the log or not beyond the current base."""
        entry = await self.entry(table, through)
        if entry is None:
            raise ValueError(f"table {table!r} has no entry {through} to archive through")
        await self.tip(table)  # a table from before trees gets its tree while it can
        hashes = await self.read_hashes(table, [i for _, i in merkle.frontier_indices(through)])
        frontier = Frontier.of(through, hashes)
        base = sign_checkpoint(
            self.signer,
            table,
            through,
            frontier.root(),
            entry.entry_hash,
            log_name=self.log_name,
            frontier=hashes,
        )
        done = await self.redis.eval(
            _ARCHIVE,
            2,
            log_key(table),
            base_key(table),
            through,
            entry.entry_hash,
            _encoder.encode(base),
        )
        if not int(done):
            raise ValueError(f"table {table!r} is already archived through seq {through} or later")
        return base

    async def genesis(self, table: str) -> Checkpoint:
        """The checkpoint of the empty log (size 0), where an unarchived table starts."""
        return sign_checkpoint(
            self.signer, table, 0, merkle.EMPTY_ROOT, GENESIS_HASH, log_name=self.log_name
        )

    async def checkpoint(self, table: str) -> Checkpoint:
        """The table's current size and Merkle root, signed now: only if it is consistent
        with the last checkpoint signed for the table (by any process), else the table is
        stopped and ``TableFencedError`` says why (fail closed)."""
        head, frontier = await self.tip(table)
        root = frontier.root()
        for _ in range(MAX_ATTEMPTS):
            last = self._signed.get(table)
            recorded = await self.redis.get(signed_key(table))
            text = _text(recorded) if recorded is not None else ""
            if text:
                size_text, _, root_hex = text.partition(" ")
                last = (int(size_text), bytes.fromhex(root_hex))
            if last is not None:
                await self._check_consistent(table, last, head.seq, root)
            if last == (head.seq, root):
                break
            value = f"{head.seq} {root.hex()}"
            if int(await self.redis.eval(_SIGNED, 1, signed_key(table), text, value)):
                break
        self._signed[table] = (head.seq, root)
        return sign_checkpoint(
            self.signer, table, head.seq, root, head.entry_hash, log_name=self.log_name
        )

    async def _check_consistent(
        self, table: str, last: tuple[int, bytes], size: int, root: bytes
    ) -> None:
        old_size, old_root = last
        if size < old_size:
            why = f"it has {size} entries, but a checkpoint of size {old_size} was signed"
        elif size == old_size:
            why = "" if root == old_root else f"its root at size {size} differs from the signed one"
        elif old_size == 0:
            why = ""  # every tree extends the empty one
        else:
            prefix = await self._reader(table, lambda r: merkle.subtree_hash(0, old_size, r))
            ok = prefix == old_root
            why = "" if ok else f"its first {old_size} entries are not the ones signed before"
        if why:
            self.fenced[table] = (old_size, size)
            self._forget(table)
            _log.error("table %r: no checkpoint signed: %s", table, why)
            if self._on_fence is not None:
                self._on_fence(table, old_size, size)
            raise TableFencedError(
                f"table {table!r} is stopped: {why}; a checkpoint now would not be consistent "
                "with the last one signed. An operator must restore the log."
            )

    def _forget(self, table: str) -> None:
        """Drop the cached head and frontier: the next append reads both again."""
        self._heads.pop(table, None)
        self._frontiers.pop(table, None)

    def _remember(self, table: str, head: Head, frontier: Frontier | None = None) -> None:
        """Keep a head (and its tree's frontier: None if not known, or no tree yet)."""
        if len(self._heads) >= _HEAD_CACHE:
            self._heads.clear()
            self._frontiers.clear()
        known = self._heads.get(table)
        self._heads[table] = head
        if frontier is not None and frontier.size == head.seq:
            self._frontiers[table] = frontier
        elif known != head:
            self._frontiers.pop(table, None)


def _deflate(entry_json: bytes) -> bytes:
    """How an entry is kept in Redis: its JSON, raw deflate (level 3). An entry's JSON
    (about 1.2 KB for a TFT contest) takes about 520 bytes, so a table costs Redis
    under 1 KiB an entry; readers inflate it back to the very same bytes."""
    return zlib.compress(entry_json, 3, wbits=-15)


def _split_repeats(batch: list[_Pending]) -> tuple[list[_Pending], list[_Pending]]:
    """The batch without rolls whose Idempotency-Key an earlier roll of it carries, and
    those rolls."""
    keys: set[str] = set()
    first, later = [], []
    for pending in batch:
        key = pending.marker.key if pending.marker else None
        if key is not None and key in keys:
            later.append(pending)
            continue
        if key is not None:
            keys.add(key)
        first.append(pending)
    return first, later


def _fail(batch: list[_Pending], error: Exception) -> None:
    for pending in batch:
        if not pending.future.done():
            pending.future.set_exception(error)


def _script_result(result: object) -> tuple[int, list[Any]] | BaseException:
    """(status, the rest of the reply): see ``_APPEND``."""
    if isinstance(result, BaseException):
        return result
    status, *rest = cast(list[Any], result)
    return int(status), [
        r if isinstance(r, bytes) or not isinstance(r, str) else r.encode() for r in rest
    ]


def _retires(batch: list[_Pending], key_id: str) -> bool:
    return any(
        p.draft.claim is not None
        and p.draft.claim.kind == "retire"
        and p.draft.claim.key_id == key_id
        for p in batch
    )


def _statement(table: str, mechanic: str, request: Any, claim: Claim) -> _Pending:
    """A statement the store appends itself; its future is answered but never awaited."""
    future: asyncio.Future[Recorded] = asyncio.get_running_loop().create_future()
    future.add_done_callback(lambda f: None if f.cancelled() else f.exception())
    draft = Draft.statement(table, mechanic, request, claim)
    return _Pending(draft, future, None, derived=True)


def _claim_args(claim: Claim | None) -> tuple[str, str]:
    if claim is None:
        return "", ""
    if claim.kind == "retire":
        return "x", claim.key_id
    if claim.kind == "commit":
        return "c", f"{claim.server_seed} {claim.commitment}"
    if claim.kind == "roll":
        return "r", str(claim.nonce)
    return "v", f"{claim.nonce} {claim.revealed_by}"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _head_value(head: Head) -> str:
    return "" if head.seq == 0 else f"{head.seq}:{head.entry_hash}"


def _parse_head(value: bytes | str) -> Head:
    text = value.decode() if isinstance(value, bytes) else value
    if not text:
        return Head.empty()
    seq, entry_hash = text.split(":", 1)
    return Head(int(seq), entry_hash)
