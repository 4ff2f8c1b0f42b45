"""Safe retries: a roll request with an ``Idempotency-Key`` is rolled at most once.

Per table, the key maps (in Redis) to the fingerprint of the request that first
used it and, once recorded, that roll's seq::

    fairroll:{<table>}:idem:<key>   "pending:<fingerprint>:<token>"   for PENDING_SECONDS
                                    "done:<fingerprint>:<seq>"        for WINDOW_SECONDS

A claim is ``pending`` with a token of this attempt's own. The append script
(``audit.store``) records the roll only if the marker still holds that very claim,
and turns it into ``done`` in the same atomic step. So:

- a recorded roll always has its ``done`` marker (never a roll without it, whatever
  Redis or the network does between the two);
- a claim is never released after an ambiguous outcome (a timeout may have recorded
  the roll): it expires after ``PENDING_SECONDS``, and an attempt whose claim expired
  can no longer be recorded late, because its token no longer matches;
- a retry with the same key and request gets the original entry; the same key with
  another request is a 409; a retry arriving while a claim is pending waits for it
  to finish or expire, then rolls only if nothing was recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from typing import cast

import msgspec
from litestar.exceptions import ClientException

from fairroll.audit.store import AnyRedis, Marker
from fairroll.rules import RuleError

__all__ = ["PENDING_SECONDS", "WINDOW_SECONDS", "Idempotency", "fingerprint"]

WINDOW_SECONDS = 24 * 3600
#: How long an unfinished claim holds its key. Safe at any length (a claim that expired
#: can never be recorded); long enough for a roll across a Redis hiccup, short enough
#: that a retry after a crash or a stall is not locked out.
PENDING_SECONDS = 5
POLL_SECONDS = 0.02

_CLAIM = """
local value = redis.call('GET', KEYS[1])
if value then return value end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
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
        self._release = redis.register_script(_RELEASE)
        self._pending = ""

    async def claim(self, print_: str, wait_seconds: float) -> int | Marker:
        """This attempt's claim (a ``Marker`` the append must still hold), or the seq of
        the roll this request already made. Waits up to ``wait_seconds`` for a pending
        claim of another attempt to finish or expire."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        pending = f"pending:{print_}:{secrets.token_hex(8)}"
        while True:
            value = await self._claim(keys=[self.name], args=[pending, PENDING_SECONDS])
            if value is None:
                self._pending = pending
                return Marker(self.name, pending, print_, WINDOW_SECONDS)
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
                    "a roll with this Idempotency-Key is still in progress (its claim "
                    f"expires within {PENDING_SECONDS} s); retry with the same key",
                    status_code=409,
                    headers={"Retry-After": "1"},
                )
            await asyncio.sleep(POLL_SECONDS)

    async def release(self) -> None:
        """Give the key back, only when this attempt certainly recorded nothing (a refused
        request), and only if it still holds this attempt's own claim."""
        if self._pending:
            await self._release(keys=[self.name], args=[self._pending])
