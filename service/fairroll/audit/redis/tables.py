"""A table's metadata in Redis: its write key's hash and its policy, set once when the
table is made, so kept by each process (a roll costs no round trip to learn them)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import AsyncIterator

import msgspec

from fairroll.audit.entry import TablePolicy
from fairroll.audit.keyspace import HEAD_PATTERN, meta_key, table_of_head
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.errors import AppendConflictError
from fairroll.audit.redis.tips import text

__all__ = ["Tables"]

_META_CACHE = 100_000
_encoder = msgspec.json.Encoder()


class Tables:
    """Creates tables and answers who may write to them and under which policy."""

    def __init__(self, redis: AnyRedis) -> None:
        self.redis = redis
        self._meta: dict[str, tuple[str | None, TablePolicy]] = {}

    async def create(self, policy: TablePolicy) -> tuple[str, str]:
        """A new table with an unguessable id and a write key; only the key's hash is
        kept, with the policy when it is not the default (the store records it in the
        log too, as the table's first entry)."""
        table = "t" + secrets.token_urlsafe(16)
        write_key = "frk_" + secrets.token_urlsafe(32)
        created = await self.redis.hsetnx(meta_key(table), "write_key_sha256", _digest(write_key))
        if not created:  # 128 random bits never collide; refuse rather than overwrite
            raise AppendConflictError("table id collision; try again")
        if policy != TablePolicy():
            # Nobody can roll on the table before this answer gives them its write key.
            await self.redis.hset(meta_key(table), "policy", _encoder.encode(policy))
        return table, write_key

    async def meta(self, table: str) -> tuple[str | None, TablePolicy]:
        """A table's write key hash (None: open) and policy."""
        known = self._meta.get(table)
        if known is not None:
            return known
        stored, policy = await self.redis.hmget(meta_key(table), ["write_key_sha256", "policy"])
        meta = (
            None if stored is None else text(stored),
            TablePolicy() if policy is None else msgspec.json.decode(policy, type=TablePolicy),
        )
        if len(self._meta) >= _META_CACHE:
            self._meta.clear()
        self._meta[table] = meta
        return meta

    async def policy(self, table: str) -> TablePolicy:
        return (await self.meta(table))[1]

    async def key_matches(self, table: str, key: str | None) -> bool | None:
        """None: the table has no write key (open). Else whether ``key`` is its write key."""
        expected, _ = await self.meta(table)
        if expected is None:
            return None
        return key is not None and hmac.compare_digest(expected, _digest(key))

    async def names(self) -> AsyncIterator[str]:
        """Every table with a log (a scan of the heads)."""
        async for raw in self.redis.scan_iter(match=HEAD_PATTERN, count=1000):
            yield table_of_head(text(raw))


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
