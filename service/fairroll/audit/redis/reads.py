"""Reads of a table's log, its tree and its signed marks: what ``audit.reader`` and the
store's reads (``audit.store``) ask Redis, one small function a read. None of them
writes, and each is one round trip, as the callers' docstrings promise.
"""

from __future__ import annotations

from typing import Any, cast

from fairroll.audit.entry import Head
from fairroll.audit.keyspace import base_key, head_key, log_key, signed_key, tree_key
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.scripts import HASHES
from fairroll.audit.redis.tips import parse_head

__all__ = [
    "Row",
    "archived_base",
    "head_of",
    "length_and_head",
    "log_rows",
    "signed_mark",
    "tree_hashes",
]

#: A stream row of the log: its id (``<seq>-0``) and its fields (``z`` or ``e``).
Row = tuple[bytes, dict[bytes, bytes]]


async def log_rows(redis: AnyRedis, table: str, start: str, end: str, count: int) -> list[Row]:
    """Up to ``count`` rows of the table's log (``keyspace.log_key``) from stream id
    ``start`` to ``end`` (XRANGE, both ends included), in order."""
    rows = await redis.xrange(log_key(table), start, end, count=count)
    return cast(list[Row], rows or [])


async def archived_base(redis: AnyRedis, table: str) -> bytes | str | None:
    """The JSON of the signed checkpoint the table's log was archived through (field
    ``checkpoint`` of ``keyspace.base_key``), None if it never was."""
    raw: bytes | str | None = await redis.hget(base_key(table), "checkpoint")
    return raw


async def tree_hashes(redis: AnyRedis, table: str, indices: list[int]) -> list[Any]:
    """The stored hashes at ``indices`` of the table's tree (``keyspace.tree_key``), by
    the hashes script (``lua/hashes.lua``): an index past the stored tree answers empty."""
    keys = [tree_key(table)]
    raw = await redis.eval(HASHES.text, len(keys), *keys, *indices)
    return cast(list[Any], raw)


async def head_of(redis: AnyRedis, table: str) -> Head:
    """The table's head as Redis holds it (``keyspace.head_key``; seq 0: none), read
    without the fence ``tips.Tips.head`` keeps."""
    return parse_head(await redis.get(head_key(table)) or b"")


async def length_and_head(redis: AnyRedis, table: str) -> tuple[int, Head]:
    """How many rows the table's log stream holds and its head, read together (one
    MULTI/EXEC: ``keyspace.log_key`` and ``keyspace.head_key`` share the table's slot)."""
    pipe = redis.pipeline(transaction=True)
    pipe.xlen(log_key(table))
    pipe.get(head_key(table))
    length, head = await pipe.execute()
    return int(length), parse_head(head or b"")


async def signed_mark(redis: AnyRedis, table: str) -> bytes | str | None:
    """``<size> <root hex>`` of the last checkpoint this log's server signed
    (``keyspace.signed_key``), None if none was."""
    raw: bytes | str | None = await redis.get(signed_key(table))
    return raw
