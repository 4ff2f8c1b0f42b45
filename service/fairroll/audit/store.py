"""The Redis store of the audit trail: one stream and one head key per table.

Keys share the table's hash tag, so a table lives in one Redis Cluster slot::

    fairroll:{<table>}:log    stream; entry seq N has stream id "N-0", field "z" = the entry's
                              JSON, raw-deflated (field "e": plain JSON, as first stored)
    fairroll:{<table>}:head   "<seq>:<entry_hash>" of the last entry
    fairroll:{<table>}:meta   hash: write_key_sha256 (tables created with a write key)
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
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
import secrets
import zlib
from collections.abc import AsyncIterator
from typing import Any, cast

import msgspec
from redis.asyncio import Redis, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from fairroll.audit.checkpoint import Checkpoint, sign_checkpoint
from fairroll.audit.entry import Draft, Entry, Head, now_rfc3339
from fairroll.audit.signing import PublicKey, Signer, seal

__all__ = [
    "AnyRedis",
    "AppendConflictError",
    "AuditStore",
    "StoreUnavailableError",
    "connect_redis",
]

KEYS_HASH = "fairroll:keys"
PAGE = 500
MAX_ATTEMPTS = 100
MAX_BATCH = 64
CONFLICTS_BEFORE_BACKOFF = 2
CLUSTER_RETRIES = 2
_HEAD_CACHE = 10_000
_META_CACHE = 100_000

_APPEND = """
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then
  return {0, head}
end
for i = 3, #ARGV, 2 do
  redis.call('XADD', KEYS[1], ARGV[i], 'z', ARGV[i + 1])
end
redis.call('SET', KEYS[2], ARGV[2])
return {1, ARGV[2]}
"""

#: A standalone Redis or a Redis Cluster: the store works on either.
AnyRedis = Redis | RedisCluster
CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")


def connect_redis(url: str, timeout: float) -> AnyRedis:
    """A client for ``url``: ``redis://``, ``rediss://``, ``unix://`` name one server;
    ``redis+cluster://host:port`` (or ``rediss+cluster://``) names any node of a Redis
    Cluster, whose topology the client then discovers (redis-py's cluster client)."""
    if url.startswith(CLUSTER_SCHEMES):
        return RedisCluster.from_url(
            url.replace("+cluster", "", 1),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # A master that is down answers nothing: fail its tables fast (503), and
            # keep serving the others.
            cluster_error_retry_attempts=1,
        )
    return Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
    )


_Row = tuple[bytes, dict[bytes, bytes]]
_Pending = tuple[Draft, "asyncio.Future[Entry]"]
_entry_decoder = msgspec.json.Decoder(Entry)
_encoder = msgspec.json.Encoder()


class StoreUnavailableError(Exception):
    """Redis could not be reached or answered with an error; nothing was acknowledged."""


class AppendConflictError(StoreUnavailableError):
    """Other writers kept moving the head; the entry was not appended."""


class AuditStore:
    """Appends and reads signed entries in Redis."""

    def __init__(self, redis: AnyRedis, signer: Signer) -> None:
        self.redis = redis
        self.signer = signer
        self._cluster = isinstance(redis, RedisCluster)
        self._queues: dict[str, list[_Pending]] = {}
        self._flusher: asyncio.Future[None] | None = None
        self._attempts: dict[str, int] = {}
        self._errors: dict[str, int] = {}
        self._heads: dict[str, Head] = {}
        self._write_keys: dict[str, str | None] = {}
        self._key_published = False

    async def append(self, draft: Draft) -> Entry:
        """Chain, sign and store ``draft``; return the entry once Redis holds it."""
        future: asyncio.Future[Entry] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(draft.table, []).append((draft, future))
        if self._flusher is None:
            # The flusher outlives a cancelled caller; it runs while anything is queued.
            self._flusher = asyncio.ensure_future(self._flush())
        return await future

    async def _flush(self) -> None:
        """Commit what is queued, round after round, until nothing is left.

        A round takes up to ``MAX_BATCH`` queued drafts of every table, chains each
        table's batch on that table's head and sends all the batches in one round trip
        (a pipeline of one atomic script call per table; on Redis Cluster, one call per
        table, concurrently, so a table whose master is down fails alone). A batch whose
        head another process moved goes back to the front of its table's queue and is
        re-chained in the next round.
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
                retry = await self._commit_round(round_)
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

    async def _commit_round(self, round_: dict[str, list[_Pending]]) -> dict[str, list[_Pending]]:
        """One round trip for every batch; returns the batches to retry."""
        retry: dict[str, list[_Pending]] = {}
        try:
            if not self._key_published:
                await self.publish_key()
        except RedisError as exc:
            error = StoreUnavailableError(f"audit store unavailable: {exc}")
            for batch in round_.values():
                _fail(batch, error)
            return {}
        unknown = [table for table in round_ if table not in self._heads]
        if unknown:
            for table, value in zip(unknown, await self._get_heads(unknown), strict=True):
                if isinstance(value, BaseException):
                    self._failed(table, round_.pop(table), value, retry)
                else:
                    self._remember(table, _parse_head(value or b""))
        chained = {
            table: self._chain([draft for draft, _ in batch], self._heads[table])
            for table, batch in round_.items()
        }
        results = await self._run_scripts(
            [(table, self._heads[table], entries) for table, entries in chained.items()]
        )
        for (table, batch), result in zip(round_.items(), results, strict=True):
            entries = chained[table]
            if isinstance(result, BaseException):
                self._failed(table, batch, result, retry)
                continue
            ok, current = result
            if ok:
                self._remember(table, Head(entries[-1].seq, entries[-1].entry_hash))
                self._attempts.pop(table, None)
                self._errors.pop(table, None)
                for (_, future), entry in zip(batch, entries, strict=True):
                    if not future.done():
                        future.set_result(entry)
                continue
            # Another writer moved the head: re-chain on the head Redis holds.
            self._remember(table, _parse_head(current))
            attempts = self._attempts[table] = self._attempts.get(table, 0) + 1
            if attempts >= MAX_ATTEMPTS:
                self._heads.pop(table, None)
                self._attempts.pop(table, None)
                error = AppendConflictError(
                    f"table {table!r} is too busy; the roll was not recorded"
                )
                _fail(batch, error)
            else:
                retry[table] = batch
        return retry

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
        A timeout is never retried (the script may have run); it answers 503."""
        self._heads.pop(table, None)
        self._attempts.pop(table, None)
        errors = self._errors.get(table, 0)
        transient = isinstance(error, RedisConnectionError) and not isinstance(
            error, RedisTimeoutError
        )
        if self._cluster and transient and errors < CLUSTER_RETRIES:
            self._errors[table] = errors + 1
            retry[table] = batch
            return
        self._errors.pop(table, None)
        _fail(batch, StoreUnavailableError(f"audit store unavailable: {error}"))

    async def _get_heads(self, tables: list[str]) -> list[bytes | BaseException | None]:
        """Each table's head, or the error that fetching it met."""
        if self._cluster:
            heads = await asyncio.gather(
                *(self.redis.get(_head_key(t)) for t in tables), return_exceptions=True
            )
            return [h.encode() if isinstance(h, str) else h for h in heads]
        pipe = self.redis.pipeline(transaction=False)
        for table in tables:
            pipe.get(_head_key(table))
        try:
            return cast(
                list[bytes | BaseException | None], await pipe.execute(raise_on_error=False)
            )
        except RedisError as exc:
            return [exc] * len(tables)

    async def _run_scripts(
        self, batches: list[tuple[str, Head, list[Entry]]]
    ) -> list[tuple[int, bytes] | BaseException]:
        """Run the compare-and-append script for each table's batch; a result or an error
        per batch."""
        calls = []
        for table, head, entries in batches:
            last = entries[-1]
            args: list[str | bytes] = [_head_value(head), f"{last.seq}:{last.entry_hash}"]
            for entry in entries:
                args += [f"{entry.seq}-0", _deflate(_encoder.encode(entry))]
            calls.append(("EVAL", _APPEND, 2, _log_key(table), _head_key(table), *args))
        if self._cluster:
            results = await asyncio.gather(
                *(self.redis.execute_command(*call) for call in calls),
                return_exceptions=True,
            )
            return [_script_result(r) for r in results]
        pipe = self.redis.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call)
        try:
            results = await pipe.execute(raise_on_error=False)
        except RedisError as exc:  # the connection failed: every batch failed
            return [exc] * len(calls)
        return [_script_result(r) for r in results]

    def _chain(self, drafts: list[Draft], head: Head) -> list[Entry]:
        entries = []
        time = now_rfc3339()
        for draft in drafts:
            entry = seal(draft, head, self.signer, time)
            entries.append(entry)
            head = Head(entry.seq, entry.entry_hash)
        return entries

    async def publish_key(self) -> None:
        """Publish this server's public key so any replica can serve it (first use kept)."""
        key = msgspec.structs.replace(self.signer.public_key, not_before=now_rfc3339())
        await self.redis.hsetnx(KEYS_HASH, self.signer.key_id, _encoder.encode(key))
        self._key_published = True

    async def retire_key(self, key_id: str) -> PublicKey | None:
        """Close a key's window now: entries it signs after this fail verification."""
        raw = await self.redis.hget(KEYS_HASH, key_id)
        if raw is None:
            return None
        key = msgspec.json.decode(raw, type=PublicKey)
        if key.not_after is None:
            key = msgspec.structs.replace(key, not_after=now_rfc3339())
            await self.redis.hset(KEYS_HASH, key_id, _encoder.encode(key))
        return key

    async def public_keys(self) -> list[PublicKey]:
        raw = await self.redis.hgetall(KEYS_HASH)
        keys = [msgspec.json.decode(value, type=PublicKey) for value in raw.values()]
        return sorted(keys, key=lambda key: key.key_id)

    async def create_table(self) -> tuple[str, str]:
        """A new table with an unguessable id and a write key; only the key's hash is kept."""
        table = "t" + secrets.token_urlsafe(16)
        write_key = "frk_" + secrets.token_urlsafe(32)
        created = await self.redis.hsetnx(_meta_key(table), "write_key_sha256", _digest(write_key))
        if not created:  # 128 random bits never collide; refuse rather than overwrite
            raise AppendConflictError("table id collision; try again")
        return table, write_key

    async def key_matches(self, table: str, key: str | None) -> bool | None:
        """None: the table has no write key (open). Else whether ``key`` is its write key.

        A table's write key is set once, when ``create_table`` makes the table under a
        fresh random id, and never changes; so what Redis says about a table is kept
        (in a bounded map) and a roll costs no extra round trip to learn it.
        """
        if table in self._write_keys:
            expected = self._write_keys[table]
        else:
            stored = await self.redis.hget(_meta_key(table), "write_key_sha256")
            expected = None if stored is None else _text(stored)
            if len(self._write_keys) >= _META_CACHE:
                self._write_keys.clear()
            self._write_keys[table] = expected
        if expected is None:
            return None
        return key is not None and hmac.compare_digest(expected, _digest(key))

    async def head(self, table: str) -> Head:
        value = await self.redis.get(_head_key(table))
        return _parse_head(value or b"")

    async def entry(self, table: str, seq: int) -> Entry | None:
        rows = await self._range(table, f"{seq}-0", f"{seq}-0", 1)
        return _entry_decoder.decode(_stored_json(rows[0][1])) if rows else None

    async def entries(self, table: str, *, after: int = 0, limit: int = PAGE) -> list[Entry]:
        """Up to ``limit`` entries with seq greater than ``after``, in order."""
        rows = await self._range(table, f"{after + 1}-0", "+", limit)
        return [_entry_decoder.decode(_stored_json(fields)) for _, fields in rows]

    async def checkpoint(self, table: str) -> Checkpoint:
        """The table's current size and head, signed now."""
        return sign_checkpoint(self.signer, table, await self.head(table))

    async def raw_entries(
        self, table: str, *, after: int = 0, until: int | None = None
    ) -> AsyncIterator[bytes]:
        """Every stored entry's JSON from seq ``after + 1`` (to ``until``), a page at a time."""
        start = f"{after + 1}-0"
        end = "+" if until is None else f"{until}-0"
        while True:
            rows = await self._range(table, start, end, PAGE)
            for _, fields in rows:
                yield _stored_json(fields)
            if len(rows) < PAGE:
                return
            last_seq = int(rows[-1][0].split(b"-")[0])
            start = f"{last_seq + 1}-0"

    async def _range(self, table: str, start: str, end: str, count: int) -> list[_Row]:
        rows = await self.redis.xrange(_log_key(table), start, end, count=count)
        return cast(list[_Row], rows or [])

    def _remember(self, table: str, head: Head) -> None:
        if len(self._heads) >= _HEAD_CACHE:
            self._heads.clear()
        self._heads[table] = head


def _deflate(entry_json: bytes) -> bytes:
    """How an entry is kept in Redis: its JSON, raw deflate (level 3). An entry's JSON
    (about 1.2 KB for a TFT contest) takes about 520 bytes, so a table costs Redis
    under 1 KiB an entry; readers inflate it back to the very same bytes."""
    return zlib.compress(entry_json, 3, wbits=-15)


def _stored_json(fields: dict[bytes, bytes]) -> bytes:
    packed = fields.get(b"z")
    return zlib.decompress(packed, wbits=-15) if packed is not None else fields[b"e"]


def _fail(batch: list[_Pending], error: Exception) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(error)


def _script_result(result: object) -> tuple[int, bytes] | BaseException:
    if isinstance(result, BaseException):
        return result
    ok, current = cast(list[Any], result)
    return int(ok), current if isinstance(current, bytes) else str(current).encode()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _log_key(table: str) -> str:
    return f"fairroll:{{{table}}}:log"


def _head_key(table: str) -> str:
    return f"fairroll:{{{table}}}:head"


def _meta_key(table: str) -> str:
    return f"fairroll:{{{table}}}:meta"


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
