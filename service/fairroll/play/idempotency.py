"""Safe retries: a roll request with an ``Idempotency-Key`` is recorded at most once.

Per table, a key that recorded a roll maps (in Redis, for ``WINDOW_SECONDS``) to the
fingerprint of its request and that roll's seq::

    fairroll:{<table>}:idem:<key>   "done:<fingerprint>:<seq>"

The marker is written by the append script itself (``audit.store``), in the same
atomic step as the entry, and the script stores nothing for a key that is already
done. There is no "pending" state to get stuck, to expire or to release:

- a recorded roll always has its marker, whatever Redis or the network does;
- an attempt that timed out (and may or may not have been recorded) needs nothing
  cleaned up: its retry either finds the marker and gets that roll back, or rolls
  and is recorded once, even when the first attempt's script runs late in Redis
  (whichever script runs first marks the key; the other stores nothing);
- duplicates in flight at once roll their dice, but only the first is recorded and
  every duplicate answers with that one (the others' dice are never shown or kept);
- the same key with another request is a 409.

A retry first looks the key up, so a repeated request costs one round trip and rolls
nothing. A retry is an acknowledgement like the first answer, so it waits for what the
operator required of one: the marker is read and written back unchanged on one
connection, followed there by the checks a round of appends gets (``WAITAOF``, the
``CONFIG GET``s, ``WAIT`` for the replicas: ``durability.confirm_marker``). A retry
whose roll the replicas do not hold yet is answered 503 "may have been recorded", as
the first attempt was, never 200.
"""

from __future__ import annotations

import hashlib

import msgspec

from fairroll.audit.keyspace import idempotency_key
from fairroll.audit.redis.durability import UnconfirmedError
from fairroll.audit.redis.errors import NotDurableError, StoreUnavailableError
from fairroll.audit.redis.markers import read_marker
from fairroll.audit.store import AnyRedis, Marker
from fairroll.play.errors import ConflictError
from fairroll.rules import RuleError

__all__ = ["WINDOW_SECONDS", "Idempotency", "fingerprint"]

WINDOW_SECONDS = 24 * 3600


def fingerprint(mechanic: str, request: msgspec.Struct) -> str:
    """SHA-256 of the mechanic and the whole request (table, seed, dice, session included)."""
    body = msgspec.json.encode([mechanic, request], order="sorted")
    return hashlib.sha256(body).hexdigest()


class Idempotency:
    def __init__(self, redis: AnyRedis, table: str, key: str, print_: str) -> None:
        if not 1 <= len(key) <= 128 or not all("!" <= c <= "~" for c in key):
            raise RuleError(
                "Idempotency-Key must be 1..128 visible ASCII characters", field="Idempotency-Key"
            )
        self.redis = redis
        self.print_ = print_
        self.marker = Marker(idempotency_key(table, key), print_, WINDOW_SECONDS)

    async def earlier(self) -> int | None:
        """The seq this request already recorded, or None if it has not been recorded;
        a recorded roll only once it is as durable as the operator requires (else
        ``StoreUnavailableError``: it may have been recorded)."""
        try:
            value = await read_marker(self.redis, self.marker.key)
        except UnconfirmedError as exc:
            if not exc.durable:
                raise NotDurableError(str(exc)) from None
            raise StoreUnavailableError(str(exc), recorded=None) from None
        return None if value is None else self.seq_of(value)

    def seq_of(self, marker: bytes | str) -> int:
        """The seq a done marker names; 409 if it was made by another request."""
        text = marker.decode() if isinstance(marker, bytes) else marker
        _, earlier, seq = text.split(":", 2)
        if earlier != self.print_:
            raise ConflictError("this Idempotency-Key was used for a different request")
        return int(seq)
