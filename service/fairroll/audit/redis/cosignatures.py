"""The cosignatures players and witnesses post of a table's checkpoints, kept so any
replica serves them: per cosigner (its verifier key), the latest it cosigned."""

from __future__ import annotations

import msgspec

from fairroll.audit.keyspace import cosignatures_key, cosigned_key
from fairroll.audit.redis.connection import AnyRedis

__all__ = ["Cosignatures", "CosignedCheckpoint"]

#: The most cosigners a table keeps (one more replaces none: the post is refused).
MAX_COSIGNERS = 256
#: About how many cosignatures the events stream keeps (``XADD MAXLEN ~``).
EVENTS_KEPT = 1_000


class CosignedCheckpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A cosigner's latest cosignature of a table's checkpoint: the note as it was
    cosigned (the log's signature line and the cosigner's), and what it states."""

    name: str
    vkey: str
    size: int
    root_hash: str
    #: The cosignature's time (POSIX seconds).
    time: int
    note: str


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(CosignedCheckpoint)


class Cosignatures:
    def __init__(self, redis: AnyRedis) -> None:
        self.redis = redis

    async def keep(self, table: str, cosigned: CosignedCheckpoint) -> bool:
        """Keep ``cosigned`` as its cosigner's latest unless a larger (or later) one is
        kept already; False when the table has ``MAX_COSIGNERS`` others."""
        key = cosignatures_key(table)
        raw = await self.redis.hget(key, cosigned.vkey)
        if raw is not None:
            kept = _decoder.decode(raw)
            if (kept.size, kept.time) > (cosigned.size, cosigned.time):
                return True
        elif await self.redis.hlen(key) >= MAX_COSIGNERS:
            return False
        encoded = _encoder.encode(cosigned)
        await self.redis.hset(key, cosigned.vkey, encoded)
        await self.redis.xadd(
            cosigned_key(table), {"c": encoded}, maxlen=EVENTS_KEPT, approximate=True
        )
        return True

    async def listed(self, table: str) -> list[CosignedCheckpoint]:
        raw = await self.redis.hgetall(cosignatures_key(table))
        found = [_decoder.decode(value) for value in raw.values()]
        return sorted(found, key=lambda c: (-c.size, c.name))
