"""What a verification trusts beyond the entries (``Trust``), and the keys a log
publishes under the pinned root as it is read (``KeyRing``): trust is rooted once."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from fairroll.audit.checkpoint import Checkpoint
from fairroll.audit.receipts import certified
from fairroll.audit.signing import KeyCertificate, verify_certificate
from fairroll.audit.verify.entries import BadEntryError

__all__ = ["KeyRing", "PublicKeyLike", "Trust"]


@dataclass(frozen=True, kw_only=True)
class Trust:
    """What a verification of entries trusts and holds them to, beyond the entries.

    ``keys`` maps key_id to a base64 Ed25519 public key; ``None`` skips the signature
    check (the report says so). ``windows`` maps key_id to its (not_before, not_after):
    an entry signed after its key was retired is bad (``published`` makes both from the
    key list a log serves). ``root``, the pinned root key id (its fingerprint, published
    out of band): version 2 entries are then checked only with keys the log itself
    published under that root. ``table`` pins the table name. ``base`` (seq, entry_hash),
    a signed checkpoint an archived log was trimmed through: the first entry must be seq +
    1 and chain on it; ``base_frontier``, its tree's frontier, lets the Merkle root be
    computed on from it. ``head`` (seq, entry_hash) is where the log must end. ``anchors``
    (seq, entry_hash) and ``roots`` (size, Merkle root) were seen earlier (receipts,
    signed checkpoints): the log must still hold each, or it was rewritten, forked or
    truncated. ``reveals`` maps a seed session to its server seed, for version 1 logs
    (version 2 logs carry their reveals).
    """

    keys: Mapping[str, str] | None
    windows: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    root: str | None = None
    table: str | None = None
    head: tuple[int, str] | None = None
    anchors: Sequence[tuple[int, str]] = ()
    roots: Sequence[tuple[int, bytes]] = ()
    reveals: Mapping[str, str] = field(default_factory=dict)
    base: tuple[int, str] | None = None
    base_frontier: Sequence[bytes] | None = None
    #: A signed checkpoint that stands in for the signatures of the entries it covers
    #: (seq 1 to its size): its root and head must match, and it must verify with a key
    #: the log published (or ``keys`` names) and had not retired; the entries'
    #: signatures are then not checked one by one (one signature instead of one each).
    covered_by: Checkpoint | None = None
    #: The lines may stop before the log's end (one part of it, ``verify_run``'s
    #: ``resume``): kept checkpoints and receipts beyond the last line are checked by the
    #: part that reaches them, not taken for a truncation.
    open_end: bool = False

    def without_covering(self) -> Trust:
        """This trust with its covering checkpoint only kept (its root and head must
        match, as any kept checkpoint's), no longer standing in for the entries'
        signatures: what a failed pass with it is read again under."""
        covering = self.covered_by
        if covering is None:
            return self
        return dataclasses.replace(
            self,
            covered_by=None,
            roots=[*self.roots, (covering.size, base64.b64decode(covering.root_hash))],
            anchors=[*self.anchors, (covering.size, covering.head_hash)],
        )

    @classmethod
    def rooted(cls, public_keys: Iterable[PublicKeyLike], root: str, **rest: Any) -> Trust:
        """:meth:`published` under the pinned ``root``: of the keys a server lists, only
        those whose certificate that root signed (``receipts.certified``, the one test a
        receipt's and a checkpoint's keys pass too: a key the list adds by hand, or one
        another root certified, is not trusted for anything: entries, checkpoints)."""
        rooted = [key for key in public_keys if certified(key, root) is not None]
        return cls.published(rooted, root=root, **rest)

    @classmethod
    def published(cls, public_keys: Iterable[PublicKeyLike], **rest: Any) -> Trust:
        """Trust in the keys a log's server publishes (``GET /v1/keys``), each within its
        window, and what else ``rest`` names."""
        listed = list(public_keys)
        return cls(
            keys={key.key_id: key.public_key for key in listed},
            windows={key.key_id: (key.not_before, key.not_after) for key in listed},
            **rest,
        )


class PublicKeyLike(Protocol):
    """A published key as ``Trust.published`` reads it (``signing.PublicKey``)."""

    @property
    def key_id(self) -> str: ...
    @property
    def public_key(self) -> str: ...
    @property
    def not_before(self) -> str | None: ...
    @property
    def not_after(self) -> str | None: ...


class KeyRing:
    """The keys an entry's signature may be checked with, as the log read so far
    publishes and retires them (``published``: key_id -> base64 public key;
    ``retired``: key_id -> the seq of its ``key.retire``), under ``root``; ``keys``
    (``Trust.keys``) for version 1 entries and a log read from the middle."""

    def __init__(self, keys: Mapping[str, str] | None, root: str | None, *, partial: bool) -> None:
        self.keys = keys
        self.root = root
        self.partial = partial
        self.published: dict[str, str] = {}
        self.retired: dict[str, int] = {}

    def retire(self, key_id: str, seq: int) -> None:
        self.retired.setdefault(key_id, seq)

    def signing_key(self, entry: dict[str, Any]) -> str | None:
        """The public key an entry's signature is checked with (None: not checked).

        Version 2, trust rooted once: a key signs in a table's log only from the entry
        that publishes it there (the first it signs, carrying its ``certificate`` by the
        pinned root), and never after a ``key.retire`` of it. Keys from ``keys`` (GET
        /v1/keys, a convenience) serve version 1 entries, and a log read from the middle
        (a range, an archived table) for keys published before it."""
        seq: int = entry["seq"]
        key_id = entry["key_id"]
        if entry["v"] >= 2:
            if key_id in self.retired:
                raise BadEntryError(
                    seq,
                    f"signed by key {key_id} after its retirement at seq "
                    f"{self.retired[key_id]} of this log",
                )
            if self.keys is None and self.root is None:
                return None  # signatures are not checked (the report says so)
            if entry.get("certificate") is not None:
                return self.publish(entry, entry["certificate"])
            published = self.published.get(key_id)
            if published is not None:
                return published
            if not self.partial and self.root is not None:
                raise BadEntryError(
                    seq, f"signed by key {key_id}, which this log did not publish before it"
                )
        if self.keys is None:
            if self.root is not None:
                raise BadEntryError(seq, f"unknown signing key {key_id!r}")
            return None
        public_key = self.keys.get(key_id)
        if public_key is None:
            raise BadEntryError(seq, f"unknown signing key {key_id!r}")
        return public_key

    def publish(self, entry: dict[str, Any], statement: Any) -> str:
        seq: int = entry["seq"]
        try:
            certificate = msgspec.convert(statement, KeyCertificate)
        except msgspec.ValidationError:
            raise BadEntryError(seq, "the entry's certificate is not a key certificate") from None
        if certificate.key_id != entry["key_id"]:
            raise BadEntryError(seq, "a certificate publishes the key that signs its entry")
        if not verify_certificate(certificate, self.root):
            who = f"the pinned root {self.root}" if self.root else "its root"
            raise BadEntryError(
                seq, f"key {certificate.key_id} is not certified by {who}: a key added by hand"
            )
        self.published[certificate.key_id] = certificate.public_key
        return certificate.public_key
