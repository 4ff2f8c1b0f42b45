"""Receipts that check alone, and equivocation caught from two of them.

Every roll's receipt carries a C2SP checkpoint (its round's signed note) and the
entry's RFC 9162 inclusion proof in that tree. With the entry (``GET .../entries/{seq}``
or the export), the keys the pinned root certified and the root, it checks alone::

    leaf   = SHA-256(0x00 || JCS(entry))          == receipt.leaf_hash
    note   = opens under a key (its name: the log name, its origin: <log name>/<table>)
    key    = certified by the pinned root (its certificate: ``GET /v1/keys`` or the log),
             and not retired at the note's size
    proof  = leads from leaf (index seq - 1) to the note's root at the note's size

The receipt's ``key_id`` is the entry's signer; the note's signer is the key signing
when the receipt was made, another one after a rotation (a session's status, a retried
roll: the entry committed under the old key, the table's checkpoint now signed by the
new one). So the note opens under any key the root certified that may sign a note of
its size, never only the entry's.

Two notes of one log (the same origin), each signed by a key the root certifies, that
state two roots for one size are a *portable proof of equivocation*: the log showed two
histories, and anyone can check it from the two notes and the keys alone.

Which keys a note is opened with is decided here only (``trusted_keys``, then
``open_checkpoint``): the keys a ``GET /v1/keys`` answer lists whose certificate the
pinned root signed (``certified``, which ``Trust.rooted`` uses too), every one at once
(a failing line of any of them rejects the note), and a retired key only for what it
signed before its retirement, as a log position: retired at seq R of the table's log
(its ``key.retire`` entry), it opens a note of a size below R only; a key the answer
marks retired (``not_after``) whose seq the caller does not give opens none (a retired
key signs nothing new).

>>> from fairroll.audit.checkpoint import sign_checkpoint
>>> from fairroll.audit.signing import Signer
>>> signer = Signer.generate()
>>> a = sign_checkpoint(signer, "t", 2, b"\\x01" * 32, "ab" * 32).text
>>> b = sign_checkpoint(signer, "t", 2, b"\\x02" * 32, "cd" * 32).text
>>> trusted = {signer.key_id: signer.public_key.public_key}
>>> equivocation(a, b, trusted).proven
True
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fairroll.audit import merkle, note
from fairroll.audit.checkpoint import (
    DEFAULT_LOG_NAME,
    InvalidSignatureError,
    NoteError,
    UnverifiedNoteError,
    parse_body,
)
from fairroll.audit.entry import canonical, leaf_hash
from fairroll.audit.signing import KeyCertificate, verify_certificate

__all__ = [
    "Equivocation",
    "ReceiptError",
    "RetiredKeyError",
    "TrustedKeys",
    "UnsignedReceiptError",
    "certified",
    "equivocation",
    "open_checkpoint",
    "trusted_keys",
    "verify_receipt",
]


class ReceiptError(ValueError):
    """A receipt that does not hold: what is wrong, in words."""


class UnsignedReceiptError(ReceiptError):
    """A receipt whose note carries no signature by any key given: signed by a key the
    root never certified, or by one the caller has not read yet (a key certified since,
    after a rotation: a live client reads ``GET /v1/keys`` again, once, and retries)."""


class RetiredKeyError(UnverifiedNoteError):
    """A note signed only by keys retired at or before its size: signed after their
    retirement, or by a key retired at a position the caller did not give."""


class TrustedKeys(dict[str, str]):
    """key_id -> base64 public key of the keys the pinned root certified, and
    ``retired``: for each retired one, the seq of its ``key.retire`` in the table's log
    (None: retired, at a position not known). A note of a size at or past that seq was
    signed after the retirement: ``for_size`` leaves the key out for it."""

    def __init__(
        self, keys: Mapping[str, str], retired: Mapping[str, int | None] | None = None
    ) -> None:
        super().__init__(keys)
        self.retired = dict(retired or {})

    def signs_at(self, key_id: str, size: int) -> bool:
        """Whether the key may sign a note of ``size`` entries: not retired, or retired
        at a seq past them."""
        if key_id not in self.retired:
            return True
        at = self.retired[key_id]
        return at is not None and size < at

    def for_size(self, size: int) -> dict[str, str]:
        """The keys a note of ``size`` entries may be signed with."""
        return {key_id: public for key_id, public in self.items() if self.signs_at(key_id, size)}


def certified(key: Any, root: str) -> str | None:
    """The public key of one listed key (a ``GET /v1/keys`` item, as JSON or as
    ``signing.PublicKey``) if the pinned ``root`` signed its certificate, else None: a key
    the list adds by hand, or one another root certified, is trusted for nothing."""

    def get(name: str) -> Any:
        return key.get(name) if isinstance(key, Mapping) else getattr(key, name, None)

    raw = get("certificate")
    if isinstance(raw, KeyCertificate):
        certificate = raw
    elif isinstance(raw, Mapping):
        try:
            certificate = KeyCertificate(**raw)
        except TypeError:
            return None
    else:
        return None
    if (
        verify_certificate(certificate, root)
        and certificate.key_id == get("key_id")
        and certificate.public_key == get("public_key")
    ):
        return certificate.public_key
    return None


def trusted_keys(
    published: Mapping[str, Any], root: str, *, retired: Mapping[str, int] | None = None
) -> TrustedKeys:
    """The keys of a ``GET /v1/keys`` answer whose certificate the pinned ``root``
    signed (``certified``): key_id -> base64 public key. A key without a valid
    certificate by the root is left out, whatever the answer says. ``retired`` gives the
    seq of each ``key.retire`` the table's log holds (``KeyRing.retired``): a key retired
    there, or marked retired by the answer (``not_after``) with no seq given, opens no
    note signed at or after its retirement (``TrustedKeys.for_size``)."""
    given = dict(retired or {})
    keys: dict[str, str] = {}
    positions: dict[str, int | None] = {}
    for key in published.get("keys", []):
        public = certified(key, root)
        if public is None:
            continue
        key_id = str(key["key_id"])
        keys[key_id] = public
        if key_id in given:
            positions[key_id] = given[key_id]
        elif key.get("not_after") is not None:
            positions[key_id] = None
    return TrustedKeys(keys, positions)


def open_checkpoint(
    text: str, keys: Mapping[str, str], *, log_name: str = DEFAULT_LOG_NAME
) -> tuple[int, bytes, str]:
    """A checkpoint note opened with every key of ``keys`` at once (``note.open_note``:
    a failing line of any of them rejects it, whichever line verified), and signed by a
    key not retired at its size (``TrustedKeys.retired``, when ``keys`` is one); returns
    (size, root, head hash). ``NoteError`` subclasses say why: ``RetiredKeyError`` for a
    note only keys retired by then signed."""
    by_hash: dict[bytes, str] = {}
    verifiers = []
    for key_id, public in keys.items():
        try:
            raw = base64.b64decode(public, validate=True)
        except binascii.Error:
            continue
        verifier = note.SignerVerifier(log_name, raw)
        by_hash[verifier.key_hash] = key_id
        verifiers.append(verifier)
    try:
        opened = note.open_note(text, verifiers)
    except InvalidSignatureError as exc:
        why = "the checkpoint's signature does not verify"
        raise InvalidSignatureError(why, exc.name) from None
    except UnverifiedNoteError:
        raise UnverifiedNoteError(
            "the checkpoint carries no signature by a key the pinned root certified"
        ) from None
    size, root, head = parse_body(opened.text)
    if not isinstance(keys, TrustedKeys):
        return size, root, head
    signers = [by_hash[sig.key_hash] for sig in opened.sigs if sig.name == log_name]
    if not any(keys.signs_at(key_id, size) for key_id in signers):
        at = keys.retired[signers[0]]
        where = f"at seq {at} of this log" if at is not None else "(GET /v1/keys) at no seq given"
        raise RetiredKeyError(
            f"the checkpoint of size {size} is signed by key {signers[0]}, retired {where}: "
            "a retired key is trusted only for what it signed before its retirement"
        )
    return size, root, head


def verify_receipt(
    entry: Mapping[str, Any],
    receipt: Mapping[str, Any],
    keys: Mapping[str, str],
    *,
    log_name: str = DEFAULT_LOG_NAME,
) -> tuple[int, bytes]:
    """Check ``receipt`` against ``entry`` (the entry's JSON), with ``keys`` (key_id ->
    base64 public key, trusted from the root: ``trusted_keys``); returns the note's
    (size, root). Raises ``ReceiptError`` naming the first thing wrong.

    The entry's key (the receipt's ``key_id``) is one the root certified; the note opens
    under ``open_checkpoint`` with every key of ``keys``, not under the entry's alone: a
    key that took over after a rotation signs the checkpoints that prove the old key's
    entries from then on, and a retired key proves only a tree below its retirement."""
    for field in ("table", "seq", "entry_hash", "key_id"):
        if receipt.get(field) != entry.get(field):
            raise ReceiptError(f"the receipt's {field} is not the entry's")
    leaf = leaf_hash(canonical(entry))
    if receipt.get("leaf_hash") != base64.b64encode(leaf).decode():
        raise ReceiptError("the entry's leaf hash is not the receipt's: the entry was changed")
    note, proof = receipt.get("checkpoint"), receipt.get("proof")
    if not isinstance(note, str) or not isinstance(proof, list):
        raise ReceiptError("the receipt carries no checkpoint and proof")
    if str(receipt["key_id"]) not in keys:
        raise ReceiptError(f"key {receipt['key_id']} is not certified by the pinned root")
    if not note.startswith(f"{log_name}/{entry.get('table')}\n"):
        raise ReceiptError(f"the checkpoint is not of log {log_name}/{entry.get('table')}")
    try:
        # The note is the table's checkpoint when the receipt was made, signed by the key
        # signing then: after a rotation, another than the entry's. It opens under every
        # key of ``keys`` at once, each one only for a size it may sign (a retired one:
        # below its retirement), as any checkpoint does.
        size, root, _ = open_checkpoint(note, keys, log_name=log_name)
        hashes = [base64.b64decode(h, validate=True) for h in proof]
        merkle.verify_inclusion(int(entry["seq"]) - 1, size, leaf, hashes, root)
    except RetiredKeyError as exc:
        raise ReceiptError(str(exc)) from None
    except UnverifiedNoteError as exc:
        raise UnsignedReceiptError(str(exc)) from None
    except (NoteError, merkle.ProofError, binascii.Error, TypeError) as exc:
        raise ReceiptError(str(exc)) from None
    if receipt.get("tree_size") not in (None, size):
        raise ReceiptError("the receipt's tree_size is not its checkpoint's")
    return size, root


@dataclass(frozen=True, slots=True)
class Equivocation:
    """Two checked notes of one log: ``proven`` when they state two roots for one size."""

    origin: str
    sizes: tuple[int, int]
    roots: tuple[str, str]
    proven: bool
    said: str


def equivocation(
    a: str, b: str, keys: Mapping[str, str], *, log_name: str = DEFAULT_LOG_NAME
) -> Equivocation:
    """Compare two signed notes (each opened under one of ``keys``, trusted from the
    root). Raises ``ReceiptError`` if either does not open or they are of two logs."""
    opened = []
    for text in (a, b):
        try:
            size, root, _ = open_checkpoint(text, keys, log_name=log_name)
        except NoteError as exc:
            why = f"a note is not signed by a key the pinned root certifies ({exc})"
            raise ReceiptError(why) from None
        opened.append((text.split("\n", 1)[0], size, root))
    (origin_a, size_a, root_a), (origin_b, size_b, root_b) = opened
    if origin_a != origin_b:
        raise ReceiptError(f"the notes are of two logs ({origin_a}, {origin_b})")
    roots = (base64.b64encode(root_a).decode(), base64.b64encode(root_b).decode())
    proven = size_a == size_b and root_a != root_b
    if proven:
        said = (
            f"EQUIVOCATION: log {origin_a} signed two trees of size {size_a}: roots "
            f"{roots[0]} and {roots[1]}; these two signed notes prove it to anyone"
        )
    elif size_a == size_b:
        said = f"consistent: both notes state the same tree of size {size_a}"
    else:
        said = (
            f"not a proof alone: sizes {size_a} and {size_b} differ; a consistency proof "
            f"between them (GET .../proofs/consistency) shows whether one extends the other"
        )
    return Equivocation(origin_a, (size_a, size_b), roots, proven, said)
