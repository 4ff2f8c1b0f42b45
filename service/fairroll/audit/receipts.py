"""Receipts that check alone, and equivocation caught from two of them.

Every roll's receipt carries a C2SP checkpoint (its round's signed note) and the
entry's RFC 9162 inclusion proof in that tree. With the entry (``GET .../entries/{seq}``
or the export), the key that signed the note and the pinned root, it checks alone::

    leaf   = SHA-256(0x00 || JCS(entry))          == receipt.leaf_hash
    note   = opens under the key (its name: the log name, its origin: <log name>/<table>)
    key    = certified by the pinned root (its certificate: ``GET /v1/keys`` or the log)
    proof  = leads from leaf (index seq - 1) to the note's root at the note's size

Two notes of one log (the same origin), each signed by a key the root certifies, that
state two roots for one size are a *portable proof of equivocation*: the log showed two
histories, and anyone can check it from the two notes and the keys alone.

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

from fairroll.audit import merkle
from fairroll.audit.checkpoint import DEFAULT_LOG_NAME, NoteError, open_note
from fairroll.audit.entry import canonical, leaf_hash
from fairroll.audit.signing import KeyCertificate, verify_certificate

__all__ = ["Equivocation", "ReceiptError", "equivocation", "trusted_keys", "verify_receipt"]


class ReceiptError(ValueError):
    """A receipt that does not hold: what is wrong, in words."""


def trusted_keys(published: Mapping[str, Any], root: str) -> dict[str, str]:
    """The keys of a ``GET /v1/keys`` answer whose certificate the pinned ``root``
    signed: key_id -> base64 public key. A key without a valid certificate by the root
    is left out, whatever the answer says."""
    trusted: dict[str, str] = {}
    for key in published.get("keys", []):
        raw = key.get("certificate") if isinstance(key, Mapping) else None
        if not isinstance(raw, Mapping):
            continue
        try:
            certificate = KeyCertificate(**raw)
        except TypeError:
            continue
        if (
            verify_certificate(certificate, root)
            and certificate.key_id == key.get("key_id")
            and certificate.public_key == key.get("public_key")
        ):
            trusted[certificate.key_id] = certificate.public_key
    return trusted


def verify_receipt(
    entry: Mapping[str, Any],
    receipt: Mapping[str, Any],
    keys: Mapping[str, str],
    *,
    log_name: str = DEFAULT_LOG_NAME,
) -> tuple[int, bytes]:
    """Check ``receipt`` against ``entry`` (the entry's JSON), with ``keys`` (key_id ->
    base64 public key, trusted from the root: ``trusted_keys``); returns the note's
    (size, root). Raises ``ReceiptError`` naming the first thing wrong."""
    for field in ("table", "seq", "entry_hash", "key_id"):
        if receipt.get(field) != entry.get(field):
            raise ReceiptError(f"the receipt's {field} is not the entry's")
    leaf = leaf_hash(canonical(entry))
    if receipt.get("leaf_hash") != base64.b64encode(leaf).decode():
        raise ReceiptError("the entry's leaf hash is not the receipt's: the entry was changed")
    note, proof = receipt.get("checkpoint"), receipt.get("proof")
    if not isinstance(note, str) or not isinstance(proof, list):
        raise ReceiptError("the receipt carries no checkpoint and proof")
    key = keys.get(str(receipt["key_id"]))
    if key is None:
        raise ReceiptError(f"key {receipt['key_id']} is not certified by the pinned root")
    if not note.startswith(f"{log_name}/{entry.get('table')}\n"):
        raise ReceiptError(f"the checkpoint is not of log {log_name}/{entry.get('table')}")
    try:
        size, root, _ = open_note(note, log_name, key)
        hashes = [base64.b64decode(h, validate=True) for h in proof]
        merkle.verify_inclusion(int(entry["seq"]) - 1, size, leaf, hashes, root)
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
        for key in keys.values():
            try:
                size, root, _ = open_note(text, log_name, key)
            except NoteError:
                continue
            opened.append((text.split("\n", 1)[0], size, root))
            break
        else:
            raise ReceiptError("a note is not signed by a key the pinned root certifies")
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
