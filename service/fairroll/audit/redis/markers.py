"""Reading an idempotency marker back (``play.idempotency``): the marker the append
script wrote beside a roll's entry (``keyspace.idempotency_key``), read as an
acknowledgement is given, so a retry is answered no sooner than the first attempt was.
"""

from __future__ import annotations

from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.durability import watch_of

__all__ = ["read_marker"]


async def read_marker(redis: AnyRedis, key: str) -> bytes | str | None:
    """The marker at ``key`` (None: no roll recorded under it). Through the store's
    durability watch when a store watches ``redis`` (``DurabilityWatch.confirm_marker``:
    ``UnconfirmedError`` when what the operator requires of an acknowledgement does not
    hold for it); a plain read of a client no store watches, of which nothing is
    required. ``RedisError`` when Redis does not answer."""
    watch = watch_of(redis)
    if watch is None:
        value: bytes | str | None = await redis.get(key)
        return value
    return await watch.confirm_marker(key)
