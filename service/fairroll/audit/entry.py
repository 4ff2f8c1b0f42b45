"""The audit entry: what is recorded for each roll, and how it is hashed and signed.

An entry is a JSON object. Its *body* is every field except ``entry_hash`` and
``signature``; the canonical bytes of the body are its JSON with keys sorted at
every level, no whitespace, UTF-8, no floats::

    entry_hash = SHA-256(bytes.fromhex(prev_hash) || canonical(body))   (hex)
    signature  = Ed25519(b"fairroll/entry/v1:" || entry_hash as ASCII)  (base64)

The first entry of a table chains on :data:`GENESIS_HASH` (64 zeros).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from fairroll.randomness import Die

__all__ = [
    "ENTRY_VERSION",
    "GENESIS_HASH",
    "SIGNATURE_CONTEXT",
    "Body",
    "Draft",
    "Entry",
    "Head",
    "Session",
    "Source",
    "canonical",
    "chain_hash",
    "now_rfc3339",
    "signed_message",
]

ENTRY_VERSION = 1
GENESIS_HASH = "0" * 64
SIGNATURE_CONTEXT = b"fairroll/entry/v1:"

Source = Literal["seeded", "supplied", "committed"]

_ENCODER = msgspec.json.Encoder(order="sorted")


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """A committed roll's seed material, without the server seed until it is revealed:
    the dice derive from ``committed_seed(server_seed, client_seed, nonce)``."""

    seed_id: str
    commitment: str
    client_seed: str
    nonce: int


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """A resolved roll waiting for its place in the chain (seq, prev_hash, signature)."""

    table: str
    mechanic: str
    request: Any
    source: Source
    seed: str | None
    dice: tuple[Die, ...]
    outcome: Any
    session: Session | None = None


class Body(msgspec.Struct, frozen=True, kw_only=True):
    """The hashed part of an entry."""

    v: int
    table: str
    seq: int
    time: str
    mechanic: str
    request: Any
    source: Source
    seed: str | None
    dice: tuple[Die, ...]
    outcome: Any
    session: Session | None
    prev_hash: str
    key_id: str


class Entry(Body, frozen=True, kw_only=True):
    """One signed link of a table's chain, exactly as stored and exported."""

    entry_hash: str
    signature: str


class Head(msgspec.Struct, frozen=True):
    """The last entry of a table: its seq (0 for an empty table) and its hash."""

    seq: int
    entry_hash: str

    @classmethod
    def empty(cls) -> Head:
        return cls(0, GENESIS_HASH)


def canonical(value: Any) -> bytes:
    """Canonical JSON: keys sorted at every level, no whitespace, UTF-8."""
    return _ENCODER.encode(value)


def chain_hash(prev_hash: str, body: Any) -> str:
    """``SHA-256(bytes.fromhex(prev_hash) || canonical(body))`` as lowercase hex."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + canonical(body)).hexdigest()


def signed_message(entry_hash: str) -> bytes:
    """The bytes an entry's signature covers."""
    return SIGNATURE_CONTEXT + entry_hash.encode("ascii")


def now_rfc3339() -> str:
    """The current UTC time, millisecond precision: ``2026-11-30T07:00:00.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
