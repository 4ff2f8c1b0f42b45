"""Conformance cases of the class "receipts"."""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec

from fairroll.audit import merkle
from fairroll.audit.entry import Entry, canonical, leaf_hash, receipt_of
from vectors.case import Case
from vectors.fixed import OUTSIDER_KEY, ROTATED_KEY, TABLE, TIME, Log
from vectors.logs import checkpoint_of, keys_of, signer_of


def receipt_at(
    log: Log, seq: int, by: Any = None, table: str = TABLE, size: int = 12
) -> dict[str, Any]:
    """The receipt of ``seq`` in a note of ``size`` entries signed by ``by`` (the log's
    key by default) under ``table``'s origin."""
    leaves = [leaf_hash(canonical(e)) for e in log]
    stored: list[bytes] = []
    frontier = merkle.Frontier.empty()
    for leaf in leaves:
        frontier, new = frontier.append(leaf)
        stored += new

    def read(indices: Any) -> list[bytes]:
        return [stored[i] for i in indices]

    note = checkpoint_of(log, size, by, table=table)["text"]
    proof = merkle.inclusion_proof(seq - 1, size, read)
    entry = msgspec.json.decode(json.dumps(log[seq - 1]).encode(), type=Entry)
    made = receipt_of(entry, leaves[seq - 1], checkpoint=(note, size), proof=proof)
    return msgspec.to_builtins(made)  # type: ignore[no-any-return]


def receipt_cases(log: Log, signer: Any) -> list[Case]:
    """Receipts: the good one, and each way of forging one."""

    def receipt(seq: int, by: Any = None, table: str = TABLE, size: int = 12) -> dict[str, Any]:
        return receipt_at(log, seq, by, table, size)

    good = receipt(3)
    flipped = [*good["proof"]]
    first = bytearray(base64.b64decode(flipped[0]))
    first[0] ^= 1
    flipped[0] = base64.b64encode(bytes(first)).decode()
    lines = good["checkpoint"].split("\n")
    lines[1] = str(int(lines[1]) + 1)
    outsider = signer_of(OUTSIDER_KEY)
    uncertified = receipt(3, outsider)
    kinds = [
        (
            "receipt-good",
            "a roll's receipt as the server answered it (nothing wrong)",
            good,
            3,
            None,
        ),
        (
            "receipt-proof-flipped",
            "one bit of the inclusion proof flipped",
            {**good, "proof": flipped},
            3,
            "proof",
        ),
        (
            "receipt-proof-cut",
            "the inclusion proof's last hash cut",
            {**good, "proof": good["proof"][:-1]},
            3,
            "proof",
        ),
        (
            "receipt-note-size-edited",
            "the note's size edited (its signature kept)",
            {**good, "checkpoint": "\n".join(lines)},
            3,
            "signature",
        ),
        (
            "receipt-held-to-another-entry",
            "a receipt of seq 3 held to seq 4",
            {**good, "seq": 4},
            4,
            "entry_hash",
        ),
        (
            "receipt-of-another-tables-origin",
            "the note re-signed by the log's key under another table's origin",
            receipt(3, table="other-table"),
            3,
            "not of log",
        ),
        (
            "receipt-signed-by-an-uncertified-key",
            "the note signed by a key the served keys list but the root did not certify",
            {**uncertified, "key_id": log[2]["key_id"]},
            3,
            "signature",
        ),
    ]
    kinds += rotation_kinds(log, signer, receipt)
    rotated_keys = _rotated_listing(signer, outsider)
    made: list[Case] = []
    for name, attack, held, seq, reason in kinds:
        item = Case(
            name,
            "receipts",
            attack,
            ok=reason is None,
            seq=None if reason is None else seq,
            reason=reason,
        )
        item.kind = "receipt"
        item.json_file("entry", log[seq - 1])
        item.json_file("receipt", held)
        if name == "receipt-signed-by-an-uncertified-key":
            item.json_file("keys", keys_of(signer, outsider, certified=False))
        elif name.startswith(ROTATION):
            item.json_file("keys", rotated_keys)
        made.append(item)
    return made


#: The receipts of a rotation: the log's key retired, the key it certified signing.
ROTATION = "receipt-after-a-rotation-"


def rotation_kinds(log: Log, signer: Any, receipt: Any) -> list[tuple[str, str, Any, int, Any]]:
    """A receipt made after a rotation (``GET .../seeds/{id}?receipt=true``, a retried
    roll): the entry signed by the log's key, now retired, proven in the table's note of
    now, signed by the key that took over (docs/audit.md, "Receipts"); and the attacker's
    notes for it: one the stolen retired key signed of the tree after its retirement, one
    a key the root never certified signed. The served keys (``_rotated_listing``) mark the
    old key retired with no seq of its ``key.retire`` given: it opens no note."""
    rotated = signer_of(ROTATED_KEY, signer)
    outsider = signer_of(OUTSIDER_KEY)
    return [
        (
            f"{ROTATION}note-by-the-key-that-took-over",
            (
                "nothing wrong: the entry signed by the retired key, its note by the key "
                "that took over (a session's status after a rotation)"
            ),
            receipt(3, rotated),
            3,
            None,
        ),
        (
            f"{ROTATION}note-by-the-retired-key",
            "the note of the tree after its retirement signed by the retired key (stolen)",
            receipt(3),
            3,
            "retired",
        ),
        (
            f"{ROTATION}note-by-an-uncertified-key",
            "the note signed by a key the served keys list but the root did not certify",
            receipt(3, outsider),
            3,
            "signature",
        ),
    ]


def _rotated_listing(signer: Any, outsider: Any) -> dict[str, Any]:
    """``GET /v1/keys`` after ``fairroll retire-key``: the log's key marked retired
    (``not_after``), the key the root certified after it, and an outsider's key listed
    with no certificate."""
    listing = keys_of(signer, signer_of(ROTATED_KEY, signer), outsider)
    listing["keys"][0]["not_after"] = TIME
    del listing["keys"][2]["certificate"]
    return listing
