"""The cosignatures players and witnesses post of a table's checkpoints, kept so any
replica serves them: per cosigner (its verifier key), the latest it cosigned, and what
vouched for the cosigner when the server kept it (its credential).

A cosigner's name is bound to the first key kept under it on the table: a later
cosignature under that name with another key is refused, so a name a player made known
cannot be taken by another key. The store is bounded without letting strangers crowd
players out: each kind of credential has a pool of its own (``POOLS``), a full pool
drops its stalest cosigner to make room, and a session holds at most
``SESSION_KEYS`` keys. ``lua/cosign.lua`` does it all in one atomic step.

    fairroll:{<table>}:cosignatures        hash: vkey -> its latest cosignature (JSON)
    fairroll:{<table>}:cosigners           hash: n:<name> -> vkey, c:<vkey> -> credential,
                                           #<credential> -> keys it holds
    fairroll:{<table>}:cosigners:<pool>    sorted set: vkey by the ms it was last kept
"""

from __future__ import annotations

import time
from typing import Annotated, Literal, NamedTuple

import msgspec

from fairroll.audit.keyspace import cosignatures_key, cosigned_key, cosigners_key, pool_key
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.scripts import COSIGN

__all__ = [
    "POOLS",
    "SESSION_KEYS",
    "Cosignatures",
    "CosignedCheckpoint",
    "Credential",
    "Kept",
]

#: What vouched for a cosigner: a witness the server is configured with, the table's
#: write key, an open seed session of the table, or nothing (an open table takes those).
Credential = Literal["witness", "write_key", "session", "none"]
#: Each credential's pool (the most cosigners it keeps) and its letter in Redis, strongest
#: first: a cosigner's credential only ever gets stronger.
POOLS: dict[Credential, tuple[str, int]] = {
    "witness": ("x", 32),
    "write_key": ("w", 64),
    "session": ("s", 128),
    "none": ("a", 32),
}
#: The most keys one seed session cosigns with (a player needs one).
SESSION_KEYS = 4
#: About how many cosignatures the events stream keeps (``XADD MAXLEN ~``).
EVENTS_KEPT = 1_000
_LETTERS = {letter: credential for credential, (letter, _) in POOLS.items()}
_RANK = {credential: rank for rank, credential in enumerate(reversed(POOLS))}


class CosignedCheckpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A cosigner's latest cosignature of a table's checkpoint: the note as it was
    cosigned (the log's signature line and the cosigner's), what it states, and what
    vouched for the cosigner. A client counts a cosigner only if it trusts its key
    itself: the credential says who could have posted it, not who the cosigner is."""

    name: str
    vkey: str
    size: int
    root_hash: str
    #: The cosignature's time (POSIX seconds).
    time: int
    note: str
    credential: Annotated[
        Credential,
        msgspec.Meta(
            description="The strongest credential a cosignature of this key came with: "
            "`witness` (a witness the server is configured with), `write_key` (the "
            "table's), `session` (an open seed session of the table: `seed_id`) or `none` "
            "(an open table's post with neither, or kept before credentials were asked). "
            "It says who could post the cosignature, not who the cosigner is: count a "
            "cosigner only if you trust its key yourself."
        ),
    ] = "none"
    seed_id: Annotated[
        str | None, msgspec.Meta(description="The seed session a `session` credential named.")
    ] = None


class Kept(NamedTuple):
    """What became of a cosignature: ``kept``; ``older`` (a larger or later one of that
    key is kept); ``name`` (the name is bound to ``bound``, another key); ``session``
    (the session cosigns with ``SESSION_KEYS`` other keys); ``full`` (the witnesses' pool
    is full)."""

    status: Literal["kept", "older", "name", "session", "full"]
    bound: str = ""


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(CosignedCheckpoint)


class Cosignatures:
    def __init__(self, redis: AnyRedis) -> None:
        self.redis = redis

    async def keep(
        self,
        table: str,
        cosigned: CosignedCheckpoint,
        credential: Credential,
        seed_id: str | None = None,
    ) -> Kept:
        """Keep ``cosigned`` as its cosigner's latest unless a larger (or later) one is
        kept already, under ``credential`` (``seed_id``: the session's)."""
        presented = _credential_id(credential, seed_id)
        keys = [
            cosignatures_key(table),
            cosigners_key(table),
            *(pool_key(table, letter) for letter, _ in POOLS.values()),
            cosigned_key(table),
        ]
        for _ in range(3):  # again if another post moved the key's credential meanwhile
            raw = await self.redis.hget(keys[1], f"c:{cosigned.vkey}")
            held = "" if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)
            chosen = presented
            if held and _RANK[_LETTERS[held[0]]] >= _RANK[credential]:
                chosen = held
            kind = _LETTERS[chosen[0]]
            stated = msgspec.structs.replace(
                cosigned,
                credential=kind,
                seed_id=chosen[2:] if kind == "session" else None,
            )
            reply = await self.redis.eval(
                COSIGN.text,
                len(keys),
                *keys,
                cosigned.vkey,
                cosigned.name,
                chosen,
                held,
                _pool_index(kind),
                POOLS[kind][1],
                SESSION_KEYS if kind == "session" else 0,
                cosigned.size,
                cosigned.time,
                _encoder.encode(stated),
                int(time.time() * 1000),
                EVENTS_KEPT,
                _pool_index(_LETTERS[held[0]]) if held else 0,
            )
            status, *rest = (r.decode() if isinstance(r, bytes) else r for r in reply)
            if status == 1:
                return Kept("kept")
            if status == 2:
                return Kept("older")
            if rest[0] == "name":
                return Kept("name", str(rest[1]))
            if rest[0] == "credential":
                return Kept("session")
            if rest[0] == "full":
                return Kept("full")
        return Kept("older")  # kept meanwhile by another post of the same key

    async def listed(self, table: str) -> list[CosignedCheckpoint]:
        raw = await self.redis.hgetall(cosignatures_key(table))
        found = [_decoder.decode(value) for value in raw.values()]
        return sorted(found, key=lambda c: (-c.size, c.name))


def _credential_id(credential: Credential, seed_id: str | None) -> str:
    letter = POOLS[credential][0]
    return f"s:{seed_id}" if credential == "session" else letter


def _pool_index(credential: Credential) -> int:
    """The pool's place in the script's KEYS (1-based: after the two hashes)."""
    return 3 + list(POOLS).index(credential)
