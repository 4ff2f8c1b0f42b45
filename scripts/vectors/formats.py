"""The format files beside the good log: bad/ (the log tampered with), receipts.json,
cosignatures.json and witness.json."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import merkle
from fairroll.audit.checkpoint import note_key, sign_checkpoint
from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from fairroll.audit.entry import Entry, canonical, leaf_hash, receipt_of
from fairroll.witness import LogKey, Witness
from vectors.fixed import COSIGNED_AT, COSIGNER, COSIGNER_KEY, ROUNDS, TABLE, WITNESS, WITNESS_KEY
from vectors.logs import resigned


def tampered(log: list[dict[str, Any]]) -> dict[str, tuple[list[Any], int, str]]:
    """name -> (entries or raw lines, first bad seq, a phrase of the reason)."""
    edited = copy.deepcopy(log)
    edited[1]["outcome"]["a_dice"] = 9
    rehashed_die = copy.deepcopy(log)
    rehashed_die[1]["dice"][0]["face"] = rehashed_die[1]["dice"][0]["face"] % 6 + 1
    skipped = [e for e in log if (e.get("session") or {}).get("nonce") != 1]
    duplicated = [json.dumps(e, separators=(",", ":")) for e in log]
    duplicated[2] = duplicated[2][:-1] + ',"seq":3}'
    not_drawn = copy.deepcopy(log)
    not_drawn[1]["source"] = "drawn"  # a chosen seed passed off as drawn
    ground = copy.deepcopy(log)  # the operator's own link for Roth's second chain roll
    ground[9]["session"]["link"] = "ab" * 32
    return {
        "edited-outcome": (edited, 2, "entry_hash does not match"),
        "die-rehashed-and-resigned": (resigned(rehashed_die, 1), 2, "does not derive"),
        "deleted-entry": ([*log[:2], *log[3:]], 3, "seq 3 is missing"),
        "nonce-skipped-and-resigned": (resigned(skipped, 4), 5, "nonce 1 of seed session"),
        "chosen-relabelled-drawn": (resigned(not_drawn, 1), 2, "not drawn"),
        "duplicate-key": (duplicated, 3, "twice"),
        "chain-link-ground-and-resigned": (resigned(ground, 9), 10, "does not hash"),
    }


def receipts(signer: Any, entries: list[Entry], read: Any) -> dict[str, Any]:
    """Each entry's receipt as its round answered it, and receipts tampered with."""
    good: list[dict[str, Any]] = []
    start = 0
    for end in ROUNDS:
        leaves = [leaf_hash(canonical(e)) for e in entries[:end]]
        note = sign_checkpoint(
            signer, TABLE, end, merkle.tree_hash_of(leaves), entries[end - 1].entry_hash
        ).text
        for entry in entries[start:end]:
            proof = merkle.inclusion_proof(entry.seq - 1, end, read)
            receipt = receipt_of(entry, leaves[entry.seq - 1], checkpoint=(note, end), proof=proof)
            good.append(msgspec.to_builtins(receipt))
        start = end
    bad = []
    first = good[2]
    hashes = list(first["proof"])
    hashes[0] = base64.b64encode(bytes(32)).decode()
    bad.append(("proof-altered", 3, {**first, "proof": hashes}, "proof"))
    lines = first["checkpoint"].split("\n")
    lines[1] = str(int(lines[1]) + 1)
    bad.append(("note-size-altered", 3, {**first, "checkpoint": "\n".join(lines)}, "signature"))
    bad.append(("other-entry", 4, {**first, "seq": 4}, "entry_hash"))
    bad.append(("proof-cut", 3, {**first, "proof": first["proof"][:-1]}, "proof"))
    return {
        "receipts": good,
        "bad": [
            {"name": name, "entry_seq": seq, "receipt": receipt, "reason": reason}
            for name, seq, receipt, reason in bad
        ],
    }


def cosignatures(note: str) -> dict[str, Any]:
    """A player's cosignature of ``note``, and cosigned notes that must not verify."""
    private = Ed25519PrivateKey.from_private_bytes(COSIGNER_KEY)
    raw = raw_public_key(private)
    line = cosign(note, COSIGNER, private, COSIGNED_AT)
    cosigned = note + line + "\n"
    body, _, signatures = cosigned.partition("\n\n")
    other = cosign(note, COSIGNER, Ed25519PrivateKey.from_private_bytes(bytes(32)), COSIGNED_AT)
    stamped = base64.b64decode(line.rsplit(" ", 1)[1])
    later = stamped[:4] + (COSIGNED_AT + 1).to_bytes(8, "big") + stamped[12:]
    return {
        "name": COSIGNER,
        "private_key": base64.b64encode(COSIGNER_KEY).decode(),
        "public_key": base64.b64encode(raw).decode(),
        "vkey": verifier_key(COSIGNER, raw),
        "time": COSIGNED_AT,
        "note": note,
        "cosigned": cosigned,
        "bad": {
            "time-altered": note + f"\u2014 {COSIGNER} {base64.b64encode(later).decode()}\n",
            "signed-by-another-key": note + other + "\n",
            "body-altered": body.replace("\n12\n", "\n13\n", 1) + "\n\n" + signatures,
        },
    }


def witness_steps(signer: Any, entries: list[Entry], read: Any) -> dict[str, Any]:
    """add-checkpoint requests from a fresh state and what the witness answers each."""
    leaves = [leaf_hash(canonical(e)) for e in entries]

    def note(size: int, root: bytes | None = None) -> str:
        tree = merkle.tree_hash_of(leaves[:size]) if root is None else root
        return sign_checkpoint(signer, TABLE, size, tree, entries[size - 1].entry_hash).text

    def request(old: int, proof: list[bytes], text: str) -> str:
        lines = [f"old {old}", *(base64.b64encode(h).decode() for h in proof)]
        return "\n".join(lines) + "\n\n" + text

    grow = merkle.consistency_proof(5, 12, read)
    bad = [bytes(32), *grow[1:]]
    asked = [
        request(0, [], note(5)),
        request(5, bad, note(12)),
        request(5, grow, note(12)),
        request(12, [], note(12)),
        request(12, [], note(5)),
        request(5, grow, note(12)),
        request(12, [], note(12, b"\x07" * 32)),
    ]
    with tempfile.TemporaryDirectory() as folder:
        witness = Witness(
            WITNESS,
            Ed25519PrivateKey.from_private_bytes(WITNESS_KEY),
            {f"fairroll/{TABLE}": [LogKey("fairroll", signer.public_key.public_key)]},
            Path(folder) / "state.json",
            clock=lambda: COSIGNED_AT,
        )
        verdicts = [asyncio.run(witness.add_checkpoint(body)) for body in asked]
    raw = raw_public_key(Ed25519PrivateKey.from_private_bytes(WITNESS_KEY))
    return {
        "name": WITNESS,
        "private_key": base64.b64encode(WITNESS_KEY).decode(),
        "vkey": verifier_key(WITNESS, raw),
        "log": f"fairroll/{TABLE}={note_key('fairroll', signer.public_key.public_key)}",
        "time": COSIGNED_AT,
        "steps": [
            {"request": body, "status": v.status, "content_type": v.content_type, "body": v.body}
            for body, v in zip(asked, verdicts, strict=True)
        ],
    }
