"""The rate limiter's token buckets in Redis: one script over one hash a bucket
(``lua/rate_limit.lua``), so a request is taken from every bucket it must fit, or from
none, in one step (the policy, and who the client is, live in ``api.protection``).

>>> RATE_LIMIT.text.startswith("local clock = redis.call('TIME')")
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from fairroll.audit.keyspace import rate_key, write_key_rate_key
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.scripts import load

__all__ = ["RATE_LIMIT", "Taken", "take"]

RATE_LIMIT = load("fairroll.audit.redis", "rate_limit")


class Taken(NamedTuple):
    """Whether the request was taken; if not, milliseconds until it would be; and the
    tokens its client's bucket holds after it."""

    allowed: bool
    wait_ms: int
    left: int


async def take(
    redis: AnyRedis, client: str, write_keys: Sequence[str], capacity: int, cost: int
) -> Taken:
    """Take ``cost`` tokens from the bucket of ``client`` and of each write key (its
    hash, as ``keyspace.write_key_rate_key`` names it), all or none. ``RedisError``
    when Redis does not answer: the caller decides what that means."""
    keys = [rate_key(client), *(write_key_rate_key(hashed) for hashed in write_keys)]
    allowed, wait_ms, left = await redis.eval(RATE_LIMIT.text, len(keys), *keys, capacity, cost)
    return Taken(bool(int(allowed)), int(wait_ms), int(left))
