"""Conformance cases of the class "receipts"."""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec

from fairroll.audit import merkle
from fairroll.audit.entry import Entry, canonical, leaf_hash, receipt_of
from vectors.case import Case
from vectors.fixed import OUTSIDER_KEY, TABLE, Log
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
        made.append(item)
    return made
