"""Safe retries: a roll request with an ``Idempotency-Key`` is rolled at most once.

Per table, the key maps (in Redis, for ``WINDOW_SECONDS``) to the fingerprint of
the request that first used it and, once recorded, that roll's seq::

    fairroll:{<table>}:idem:<key>   "pending:<fingerprint>" | "done:<fingerprint>:<seq>"

A retry with the same key and the same request gets the original entry back; the
same key with another request is a 409; a duplicate arriving while the first is
still being rolled waits for it.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import cast

import msgspec
from litestar.exceptions import ClientException

from fairroll.audit.store import AnyRedis
from fairroll.rules import RuleError

__all__ = ["WINDOW_SECONDS", "Idempotency", "fingerprint"]

WINDOW_SECONDS = 24 * 3600
WAIT_SECONDS = 10.0

_CLAIM = """
local value = redis.call('GET', KEYS[1])
if value then return value end
redis.call('SET', KEYS[1], 'pending:' .. ARGV[1], 'EX', ARGV[2])
return false
"""


def fingerprint(mechanic: str, request: msgspec.Struct) -> str:
    """SHA-256 of the mechanic and the whole request (table, seed, dice, session included)."""
    body = msgspec.json.encode([mechanic, request], order="sorted")
    return hashlib.sha256(body).hexdigest()


class Idempotency:
    def __init__(self, redis: AnyRedis, table: str, key: str) -> None:
        if not 1 <= len(key) <= 128 or not all("!" <= c <= "~" for c in key):
            raise RuleError(
                "Idempotency-Key must be 1..128 visible ASCII characters", field="Idempotency-Key"
            )
        self.redis = redis
        self.name = f"fairroll:{{{table}}}:idem:{key}"
        self._claim = redis.register_script(_CLAIM)

    async def claim(self, print_: str) -> int | None:
        """None: this request may roll now. A seq: it was rolled before, as that entry."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_SECONDS
        while True:
            value = await self._claim(keys=[self.name], args=[print_, WINDOW_SECONDS])
            if value is None:
                return None
            state, _, rest = cast(bytes, value).decode().partition(":")
            earlier, _, seq = rest.partition(":")
            if earlier != print_:
                raise ClientException(
                    "this Idempotency-Key was used for a different request", status_code=409
                )
            if state == "done":
                return int(seq)
            if loop.time() > deadline:
                raise ClientException(
                    "a roll with this Idempotency-Key is still in progress; retry",
                    status_code=409,
                )
            await asyncio.sleep(0.02)

    async def complete(self, print_: str, seq: int) -> None:
        await self.redis.set(self.name, f"done:{print_}:{seq}", ex=WINDOW_SECONDS)

    async def release(self) -> None:
        await self.redis.delete(self.name)
