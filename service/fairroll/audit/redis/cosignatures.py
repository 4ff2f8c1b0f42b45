"""The cosignatures players and witnesses post of a table's checkpoints, kept so any
replica serves them: per cosigner (its verifier key), the latest it cosigned, and what
vouched for the cosigner when the server kept it (its credential).

A cosigner's name is bound to the first key kept under it on the table, while the table
keeps that cosigner: a later cosignature under that name with another key is refused,
so a name a player made known cannot be taken by another key while the player's
cosignature is kept. A name is a label, not trust (a client counts only keys its player
pinned), so it goes with its cosigner, and a key kept with no credential, or with a
session no longer open, never holds a name against one posted with a credential. The
store is bounded without letting
strangers crowd players out: each kind of credential has a pool of its own (``POOLS``),
a full pool drops its stalest cosigner to make room, a session holds at most
``SESSION_KEYS`` keys, and one origin (a client address, ``origin_of``) holds at most
``ORIGIN_KEYS`` places of a pool strangers can reach, making room from its own stalest.
Every field of the hash belongs to, or counts, a kept cosigner. ``lua/cosign.lua`` does
it all in one atomic step.

    fairroll:{<table>}:cosignatures        hash: vkey -> its latest cosignature (JSON)
    fairroll:{<table>}:cosigners           hash: n:<name> -> vkey, c:<vkey> -> credential,
                                           #<credential> -> keys it holds, o:<vkey> ->
                                           its origin, @<pool>:<origin> -> keys it holds
    fairroll:{<table>}:cosigners:<pool>    sorted set: vkey by the ms it was last kept
"""

from __future__ import annotations

import hashlib
import ipaddress
import time
from typing import Annotated, Literal, NamedTuple

import msgspec

from fairroll.audit.keyspace import (
    cosignatures_key,
    cosigned_key,
    cosigners_key,
    pool_key,
    session_key,
)
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.scripts import COSIGN

__all__ = [
    "ORIGIN_KEYS",
    "POOLS",
    "SESSION_KEYS",
    "Cosignatures",
    "CosignedCheckpoint",
    "Credential",
    "Kept",
    "origin_of",
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
#: The most places one origin holds in a pool strangers can reach (an open table's
#: sessions, and posts with none): a table's players behind one address fit, and a
#: flood from one address churns only its own places.
ORIGIN_KEYS: dict[Credential, int] = {"session": 16, "none": 8}
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
        origin: str | None = None,
    ) -> Kept:
        """Keep ``cosigned`` as its cosigner's latest unless a larger (or later) one is
        kept already, under ``credential`` (``seed_id``: the session's), posted from
        ``origin`` (``origin_of`` the client's address; None: the server's own)."""
        presented = _credential_id(credential, seed_id)
        keys = [
            cosignatures_key(table),
            cosigners_key(table),
            *(pool_key(table, letter) for letter, _ in POOLS.values()),
            cosigned_key(table),
        ]
        for _ in range(3):  # again if another post moved a credential the script reads
            held, bound = (
                _text(raw)
                for raw in await self.redis.hmget(
                    keys[1], [f"c:{cosigned.vkey}", f"n:{cosigned.name}"]
                )
            )
            # The credential of another key holding the name: a session's hold on it
            # lasts while the session is open, which the script reads in its hash.
            theirs = _text(await self.redis.hget(keys[1], f"c:{bound}")) if bound else ""
            if bound == cosigned.vkey:
                theirs = ""
            their_session = session_key(table, theirs[2:] if theirs.startswith("s:") else "")
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
                len(keys) + 1,
                *keys,
                their_session,
                cosigned.vkey,
                cosigned.name,
                chosen,
                held,
                POOLS[kind][1],
                SESSION_KEYS if kind == "session" else 0,
                cosigned.size,
                cosigned.time,
                _encoder.encode(stated),
                int(time.time() * 1000),
                EVENTS_KEPT,
                origin or "",
                ORIGIN_KEYS.get(kind, 0) if origin else 0,
                theirs,
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


def _text(raw: object) -> str:
    """A field as Redis answered it, as text ("" when absent)."""
    return "" if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)


def _credential_id(credential: Credential, seed_id: str | None) -> str:
    letter = POOLS[credential][0]
    return f"s:{seed_id}" if credential == "session" else letter


def origin_of(address: str) -> str:
    """The origin a client address counts as, as the store keeps it: a digest (the
    address itself is never stored) of the address, or of its /64 for IPv6, where one
    subscriber holds a whole /64.

    >>> origin_of("2001:db8::1") == origin_of("2001:db8::2:3")
    True
    >>> origin_of("192.0.2.1") == origin_of("192.0.2.2")
    False
    """
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        named = address
    else:
        if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
            named = str(ipaddress.ip_network(f"{parsed}/64", strict=False))
        else:
            named = str(getattr(parsed, "ipv4_mapped", None) or parsed)
    return hashlib.sha256(named.encode()).hexdigest()[:16]
