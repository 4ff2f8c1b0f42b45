"""The audit entry: what is recorded for each roll, and how it is hashed and signed.

An entry is a JSON object. Its *body* is every field except ``entry_hash`` and
``signature``; its canonical bytes are RFC 8785 (JCS): keys sorted by UTF-16 code
units at every level, no whitespace, UTF-8, integers only (within +-(2**53 - 1))::

    entry_hash = SHA-256(bytes.fromhex(prev_hash) || JCS(body))         (hex)
    signature  = Ed25519(b"fairroll/entry/v1:" || entry_hash as ASCII)  (base64)
    leaf hash  = SHA-256(0x00 || JCS(entry))   (the whole entry: RFC 6962 Merkle leaf)

The first entry of a table chains on :data:`GENESIS_HASH` (64 zeros).

Who chose a roll's seed is its ``source`` (format version 2): ``drawn`` (the server
drew it), ``chosen`` (the caller gave it: reproducible, and grindable, so it proves
nothing about fairness), ``committed`` (a commit-reveal session) or ``supplied``
(dice rolled elsewhere). Version 1 entries said ``seeded`` for the first two.
Entries that are not rolls are *statements* (``source: statement``, no dice):
``session.commit``, ``session.renew``, ``session.reveal``, ``table.policy``,
``key.retire`` and ``audit.epoch``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from fairroll.randomness import Die

__all__ = [
    "COMMIT_MECHANIC",
    "ENTRY_VERSION",
    "GENESIS_HASH",
    "KEY_RETIRE_MECHANIC",
    "MAX_SAFE_INTEGER",
    "POLICY_MECHANIC",
    "RENEW_MECHANIC",
    "REVEAL_MECHANIC",
    "SIGNATURE_CONTEXT",
    "Body",
    "Claim",
    "Draft",
    "Entry",
    "Head",
    "NotCanonicalError",
    "Session",
    "Source",
    "TablePolicy",
    "canonical",
    "canonical_of",
    "chain_hash",
    "jcs",
    "leaf_hash",
    "now_rfc3339",
    "receipt_of",
    "signed_message",
]

ENTRY_VERSION = 2
GENESIS_HASH = "0" * 64
SIGNATURE_CONTEXT = b"fairroll/entry/v1:"
MAX_SAFE_INTEGER = 2**53 - 1
#: Statements: a seed session's commitment (before any roll uses it), its reveal, and a
#: table's policy (what kinds of roll it refuses).
COMMIT_MECHANIC = "session.commit"
REVEAL_MECHANIC = "session.reveal"
#: A hash-chain session's next chain, committed when the one before is used up.
RENEW_MECHANIC = "session.renew"
POLICY_MECHANIC = "table.policy"
#: Keys in the log: a key's retirement in a table (no entry it signs may follow). A key is
#: published by the ``certificate`` of its first entry in the table.
KEY_RETIRE_MECHANIC = "key.retire"

#: ``seeded`` is version 1's word for ``drawn`` or ``chosen`` (it did not say which).
Source = Literal["drawn", "chosen", "committed", "supplied", "statement", "seeded"]

_ENCODER = msgspec.json.Encoder(order="sorted")


class Session(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A committed roll's seed material. In a commit-reveal session, without the server
    seed until it is revealed: the dice derive from ``committed_seed(server_seed,
    client_seed, nonce)``. In a hash-chain session (``link`` set), the roll reveals its
    link: the dice derive from ``committed_seed(link, client_seed, nonce)`` at once, and
    ``commitment`` is the anchor of the chain that ``first_nonce`` starts."""

    seed_id: str
    commitment: str
    client_seed: str
    nonce: int
    link: str | None = None
    first_nonce: int | None = None


class TablePolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What kinds of roll a table takes. Set once, when the table is created, and recorded
    as its first entry (``table.policy``), so verifiers hold the table to it."""

    chosen_seeds: bool = msgspec.field(default=True)
    supplied_dice: bool = msgspec.field(default=True)
    #: False: every roll is in a seed session (a server-drawn seed is fair only if the
    #: operator is honest, so a table that trusts no operator refuses it).
    drawn_seeds: bool = msgspec.field(default=True)


class Claim(msgspec.Struct, frozen=True, kw_only=True):
    """What an entry does to its seed session, checked and done by the same atomic append
    that stores the entry (so a refused roll consumes nothing, and no roll can follow a
    reveal): ``commit`` creates the session (``nonce`` 0), ``roll`` takes ``nonce`` (the
    session must be at ``nonce - 1``, open, and its chain not used up), ``renew`` gives a
    hash-chain session its next chain (at ``nonce``, the last one's end), ``reveal`` closes
    it (at ``nonce``)."""

    kind: Literal["commit", "renew", "roll", "reveal", "retire"]
    seed_id: str = ""
    nonce: int = 0
    #: retire: the key the entry retires in the table's log.
    key_id: str = ""
    #: commit: the secret server seed and its commitment, kept in the session's record.
    server_seed: str = ""
    commitment: str = ""
    #: commit and renew of a hash-chain session: its chain's length (0: commit-reveal).
    length: int = 0
    #: reveal: ``request`` (POST .../reveal) or ``expiry`` (idle for a day).
    revealed_by: str = ""


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
    #: Not recorded: the seed-session step the append must take with this entry.
    claim: Claim | None = None

    @classmethod
    def statement(
        cls,
        table: str,
        mechanic: str,
        request: Any,
        claim: Claim | None = None,
        outcome: Any = None,
    ) -> Draft:
        """A statement about the log (no dice): a commitment, a reveal, a policy, a key's
        retirement, an epoch."""
        return cls(
            table=table,
            mechanic=mechanic,
            request=request,
            source="statement",
            seed=None,
            dice=(),
            outcome=outcome,
            claim=claim,
        )


class KeyCertificate(msgspec.Struct, frozen=True, kw_only=True):
    """A root key's statement that ``key_id`` (``public_key``) signs fairroll entries.
    ``root_public_key``'s key id (``certified_by``) is the fingerprint an operator
    publishes out of band; a root certifies itself. The first entry a key signs in a table's log
    carries it (``certificate``): that is where the key is published, in the log."""

    key_id: str
    public_key: str
    certified_by: str
    root_public_key: str
    signature: str


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
    #: Version 2: the signing key's root certificate, on the first entry the key signs in
    #: the table (null on every other).
    certificate: KeyCertificate | None = None


class Entry(Body, frozen=True, kw_only=True):
    """One signed link of a table's chain, exactly as stored and exported."""

    entry_hash: str
    signature: str


class Receipt(msgspec.Struct, frozen=True, kw_only=True):
    """Identifies the audit entry that records a roll or a statement, and is a checkpoint:
    ``checkpoint`` is the C2SP signed note of a tree that holds the entry (its round's,
    signed once for every entry of the round) and ``proof`` the entry's RFC 9162 inclusion
    proof in it (base64 hashes), so the receipt checks alone: entry, proof, note, pinned
    root. ``leaf_hash`` is the entry's RFC 6962 leaf hash (base64). Two receipts whose
    notes disagree on a tree are a portable proof of equivocation."""

    table: str
    seq: int
    entry_hash: str
    signature: str
    key_id: str
    source: Source
    leaf_hash: str
    #: The signed note (C2SP tlog-checkpoint) and the tree size it states.
    checkpoint: str | None = None
    tree_size: int | None = None
    proof: list[str] | None = None


def receipt_of(
    entry: Entry,
    leaf: bytes | None = None,
    *,
    checkpoint: tuple[str, int] | None = None,
    proof: Sequence[bytes] = (),
) -> Receipt:
    """The receipt of ``entry``; ``leaf``, its leaf hash if the caller has it already;
    ``checkpoint`` (note text, tree size) and ``proof``, a tree that holds it."""
    if leaf is None:
        leaf = leaf_hash(canonical(entry))
    b64 = base64.b64encode
    return Receipt(
        checkpoint=checkpoint[0] if checkpoint else None,
        tree_size=checkpoint[1] if checkpoint else None,
        proof=[b64(h).decode() for h in proof] if checkpoint else None,
        table=entry.table,
        seq=entry.seq,
        entry_hash=entry.entry_hash,
        signature=entry.signature,
        key_id=entry.key_id,
        source=entry.source,
        leaf_hash=base64.b64encode(leaf).decode(),
    )


class Head(msgspec.Struct, frozen=True):
    """The last entry of a table: its seq (0 for an empty table) and its hash."""

    seq: int
    entry_hash: str

    @classmethod
    def empty(cls) -> Head:
        return cls(0, GENESIS_HASH)


class NotCanonicalError(ValueError):
    """A value that has no RFC 8785 form fairroll accepts: a float, an integer beyond
    +-(2**53 - 1), a lone surrogate, or a non-string key."""


def canonical(value: Any) -> bytes:
    """RFC 8785 bytes of what fairroll itself writes (structs with ASCII field names and
    bounded integers, for which sorting by code point is sorting by UTF-16): the fast path
    of :func:`jcs`, which any value read back goes through."""
    return _ENCODER.encode(value)


def canonical_of(line: bytes) -> Any | None:
    """The JSON value of ``line`` if ``line`` is already its RFC 8785 form, as an export
    writes every entry; else None (take :func:`jcs`'s slow path). The fast check covers
    the common case exactly: ASCII text with no ``\\u`` escape (so code point order is
    UTF-16 order and no string needs another escape), no key written twice, and no number
    but an integer of at most 15 digits; then re-encoding the decoded value with sorted
    keys gives ``line`` back byte for byte, or it is not canonical.

    >>> canonical_of(b'{"a":1,"b":[true,"x"]}')
    {'a': 1, 'b': [True, 'x']}
    >>> canonical_of(b'{"b":1,"a":2}') is None
    True
    """
    if not line.isascii() or b"\\u" in line:
        return None
    try:
        value = _DECODER.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # the slow path says why
        return None
    if _ENCODER.encode(value) != line or _WIDE.search(line):
        return None
    return value


def jcs(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a JSON value as read from anywhere: keys sorted by their
    UTF-16 code units, integers within +-(2**53 - 1), no floats (``NotCanonicalError``).

    >>> jcs({"b": [1, "é"], "a": None, "\U0001f3b2": 0, "\ue000": 0}).decode()
    '{"a":null,"b":[1,"é"],"\U0001f3b2":0,"\ue000":0}'
    """
    try:
        return _ENCODER_AS_IS.encode(_jcs_order(value))
    except UnicodeEncodeError:
        raise NotCanonicalError("a string holds a lone surrogate") from None


def leaf_hash(entry_bytes: bytes) -> bytes:
    """RFC 6962 leaf hash of an entry's JCS bytes: ``SHA-256(0x00 || bytes)``."""
    return hashlib.sha256(b"\x00" + entry_bytes).digest()


def chain_hash(prev_hash: str, body: Any, *, read_canonical: bool = False) -> str:
    """``SHA-256(bytes.fromhex(prev_hash) || canonical(body))`` as lowercase hex; a body
    read back as plain JSON (a dict) goes through :func:`jcs`, unless it was read from
    canonical text (``read_canonical``: :func:`canonical_of` found it so)."""
    fast = read_canonical or not isinstance(body, dict)
    data = canonical(body) if fast else jcs(body)
    return hashlib.sha256(bytes.fromhex(prev_hash) + data).hexdigest()


def signed_message(entry_hash: str) -> bytes:
    """The bytes an entry's signature covers."""
    return SIGNATURE_CONTEXT + entry_hash.encode("ascii")


def now_rfc3339() -> str:
    """The current UTC time, millisecond precision: ``2026-11-30T07:00:00.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_ENCODER_AS_IS = msgspec.json.Encoder()


def _no_float(literal: str) -> Any:
    raise ValueError(f"{literal} is a float: entries hold integers only")


#: Decodes integers only (a float literal fails the decode: the slow path names it).
_DECODER = msgspec.json.Decoder(float_hook=_no_float)
#: A number of sixteen digits or more (one starts after ``:``, ``,`` or ``[`` in text
#: with no whitespace): an integer that may be beyond 2**53; a string that holds the
#: same bytes goes the slow path too, which decides either way.
_WIDE = re.compile(rb"[:,\[]-?[0-9]{16}")


def _jcs_order(value: Any) -> Any:
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise NotCanonicalError("an object key is not a string")
        ordered = sorted(value, key=_utf16)
        return {key: _jcs_order(value[key]) for key in ordered}
    if isinstance(value, list | tuple):
        return [_jcs_order(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise NotCanonicalError(f"the integer {value} is beyond +-(2**53 - 1)")
        return value
    if isinstance(value, float):
        raise NotCanonicalError(f"{value} is a float: entries hold integers only")
    if isinstance(value, msgspec.Struct):
        return _jcs_order(msgspec.to_builtins(value))
    raise NotCanonicalError(f"{type(value).__name__} is not a JSON value")


def _utf16(key: str) -> bytes:
    try:
        return key.encode("utf-16-be")
    except UnicodeEncodeError:
        raise NotCanonicalError("an object key holds a lone surrogate") from None
