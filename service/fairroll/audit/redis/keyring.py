"""The deployment's signing keys in Redis: every key that ever signed, published on first
use and retired by an operator (``fairroll retire-key``)."""

from __future__ import annotations

import msgspec

from fairroll.audit.entry import now_rfc3339
from fairroll.audit.keyspace import KEYS_HASH
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.signing import PublicKey, Signer

__all__ = ["KeyRing"]

_encoder = msgspec.json.Encoder()


class KeyRing:
    """This server's key and the set of every key, as the store's processes share it."""

    def __init__(self, redis: AnyRedis, signer: Signer) -> None:
        self.redis = redis
        self.signer = signer
        #: Keys retired anywhere, as last read (``refresh``) or retired here.
        self.retired: set[str] = set()
        self.published = False

    async def publish(self) -> None:
        """Publish this server's public key and its root's certificate so any replica can
        serve them (first use kept; a key published before certificates were gains its)."""
        certificate = self.signer.certificate
        key = msgspec.structs.replace(
            self.signer.public_key, not_before=now_rfc3339(), certificate=certificate
        )
        if not await self.redis.hsetnx(KEYS_HASH, self.signer.key_id, _encoder.encode(key)):
            raw = await self.redis.hget(KEYS_HASH, self.signer.key_id)
            kept = msgspec.json.decode(raw, type=PublicKey) if raw is not None else key
            if kept.certificate is None:
                kept = msgspec.structs.replace(kept, certificate=certificate)
                await self.redis.hset(KEYS_HASH, self.signer.key_id, _encoder.encode(kept))
        self.published = True

    async def retire(self, key_id: str) -> PublicKey | None:
        """Mark a key retired in the key set (every process then stops signing with it);
        None if no such key was ever published."""
        raw = await self.redis.hget(KEYS_HASH, key_id)
        if raw is None:
            return None
        if key_id == self.signer.key_id:
            raise ValueError("a key is retired by a server holding another (the new) key")
        key = msgspec.json.decode(raw, type=PublicKey)
        if key.not_after is None:
            key = msgspec.structs.replace(key, not_after=now_rfc3339())
            await self.redis.hset(KEYS_HASH, key_id, _encoder.encode(key))
        self.retired.add(key_id)
        return key

    async def public_keys(self) -> list[PublicKey]:
        raw = await self.redis.hgetall(KEYS_HASH)
        keys = [msgspec.json.decode(value, type=PublicKey) for value in raw.values()]
        return sorted(keys, key=lambda key: key.key_id)

    async def refresh(self) -> None:
        """Learn which keys were retired, by any process."""
        self.retired = {key.key_id for key in await self.public_keys() if key.not_after}

    @property
    def own_retired(self) -> bool:
        return self.signer.key_id in self.retired
