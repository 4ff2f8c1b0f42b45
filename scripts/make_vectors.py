#!/usr/bin/env python3
"""Write the audit-format test vectors in docs/vectors/ (every verifier runs them in CI).

Run: python scripts/make_vectors.py   (tests/test_vectors.py fails when they drift)

Everything is fixed (the key, the times, the seeds) and Ed25519 signatures are
deterministic, so the files come out byte for byte the same each time:

    keys.json             GET /v1/keys as a server with the vector key answers it
    log.ndjson            a table's log, format 2: a drawn, a chosen and a supplied roll;
                          a seed session's commitment, two committed rolls and its reveal;
                          a hash-chain session of two links for Roth, two rolls, its
                          renewal and a third roll on the next chain
    checkpoint.json       the signed checkpoint of the whole log (its "text" is the note)
    proofs.json           inclusion proofs of every entry in that tree, consistency
                          proofs from every smaller size, and the root at every size
    receipts.json         each entry's receipt as its round answered it (two rounds:
                          seq 1..5 and 6..12, one signed note each, the inclusion proof
                          in that round's tree), and receipts tampered with, each with
                          a phrase of the reason every verifier must report
    cosignatures.json     a player's cosignature (C2SP cosignature/v1) of checkpoint.json
                          at a fixed time: its key, verifier key and the cosigned note;
                          and cosigned notes tampered with, which must not verify
    witness.json          a C2SP tlog-witness's add-checkpoint requests, in order, from
                          a fresh state, each with the status and body the witness must
                          answer (its cosignatures dated at a fixed time): the first
                          tree, a bad proof, a consistent growth, the same tree again, a
                          rollback, a stale old size, another tree of a size it holds
    jcs.json              RFC 8785 cases: a JSON value and its canonical bytes
    bad/<name>.ndjson     the log tampered with, and in expected.json the first bad seq
                          and a phrase of the reason every verifier must report
"""

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
from fairroll.audit.entry import (
    COMMIT_MECHANIC,
    RENEW_MECHANIC,
    REVEAL_MECHANIC,
    Draft,
    Entry,
    Head,
    Session,
    canonical,
    chain_hash,
    jcs,
    leaf_hash,
    receipt_of,
)
from fairroll.audit.signing import load_signer, seal
from fairroll.chain import HashChain
from fairroll.randomness import SeededDice, SuppliedDice, commitment_of, committed_seed
from fairroll.rules.tft import Contest, Contestant, resolve_contest
from fairroll.witness import LogKey, Witness

OUT = Path(__file__).resolve().parents[1] / "docs" / "vectors"
#: The vector key: a 32-byte Ed25519 seed, public here on purpose. Never deploy it.
VECTOR_KEY = base64.b64encode(b"fairroll audit vectors key 00001").decode()
TABLE = "vectors"
TIME = "2026-12-01T00:00:00.000Z"
DRAWN = "6fc8e2f6f33f369a144f83c10ade9c8d3a8096bc2038012a4e064e700abd6403"
SERVER_SEED = "a3f1c0de" * 8
SEED_ID = "sVectorsSession01"
#: The hash-chain session: two chains of two links, from these last links.
CHAIN_ID = "sVectorsChain0001"
CHAIN_LASTS = ("c4a1" * 16, "5eed" * 16)


def contest(source: SeededDice | SuppliedDice) -> tuple[Contest, Any]:
    request = Contest(
        a=Contestant(name="Roth", attribute=16, talents=2), b=Contestant(attribute=12)
    )
    return request, resolve_contest(request, source)


def roll_draft(source: SeededDice | SuppliedDice, kind: str, **extra: Any) -> Draft:
    request, outcome = contest(source)
    return Draft(
        table=TABLE,
        mechanic="tft.contest",
        request=request,
        source=kind,  # type: ignore[arg-type]
        seed=extra.pop("seed", None),
        dice=source.dice,
        outcome=outcome,
        **extra,
    )


def statement(mechanic: str, request: dict[str, Any]) -> Draft:
    return Draft.statement(TABLE, mechanic, request)


def build() -> list[Entry]:
    signer = load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    commitment = commitment_of(SERVER_SEED)
    drafts = [
        roll_draft(SeededDice(DRAWN), "drawn", seed=DRAWN),
        roll_draft(SeededDice("campaign-7/roll-12"), "chosen", seed="campaign-7/roll-12"),
        roll_draft(SuppliedDice({"a": [6, 5, 5, 4, 2, 2, 1], "b": [5, 4, 4, 4]}), "supplied"),
        statement(COMMIT_MECHANIC, {"seed_id": SEED_ID, "commitment": commitment}),
    ]
    for nonce, client_seed in ((1, "player-1"), (2, "gm")):
        dice = SeededDice(committed_seed(SERVER_SEED, client_seed, nonce))
        session = Session(
            seed_id=SEED_ID, commitment=commitment, client_seed=client_seed, nonce=nonce
        )
        drafts.append(roll_draft(dice, "committed", session=session))
    drafts.append(
        statement(
            REVEAL_MECHANIC,
            {
                "seed_id": SEED_ID,
                "commitment": commitment,
                "server_seed": SERVER_SEED,
                "rolls": 2,
                "revealed_by": "request",
            },
        )
    )
    drafts += chain_drafts()
    entries, head = [], Head.empty()
    for index, draft in enumerate(drafts):
        entry = seal(draft, head, signer, TIME, publish=index == 0)
        entries.append(entry)
        head = Head(entry.seq, entry.entry_hash)
    return entries


def chain_drafts() -> list[Draft]:
    """A hash-chain session: its commitment, two rolls, its renewal, one more roll."""
    first, second = (HashChain(last, 2) for last in CHAIN_LASTS)
    drafts = [
        statement(
            COMMIT_MECHANIC,
            {
                "seed_id": CHAIN_ID,
                "kind": "chain",
                "commitment": first.anchor,
                "length": 2,
                "first_nonce": 1,
                "player": "Roth",
            },
        )
    ]
    for nonce, chain, start in ((1, first, 1), (2, first, 1), (3, second, 3)):
        if nonce == 3:
            drafts.append(
                statement(
                    RENEW_MECHANIC,
                    {
                        "seed_id": CHAIN_ID,
                        "kind": "chain",
                        "commitment": second.anchor,
                        "length": 2,
                        "first_nonce": 3,
                        "previous": first.anchor,
                    },
                )
            )
        link = chain.link(nonce - start + 1)
        session = Session(
            seed_id=CHAIN_ID,
            commitment=chain.anchor,
            client_seed="roth-device",
            nonce=nonce,
            link=link,
            first_nonce=start,
        )
        dice = SeededDice(committed_seed(link, "roth-device", nonce))
        drafts.append(roll_draft(dice, "committed", session=session))
    return drafts


def resigned(entries: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """The operator's rewrite: re-chained and re-signed with the real key from ``start``."""
    signer = load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    out = copy.deepcopy(entries)
    for index in range(start, len(out)):
        entry = out[index]
        entry["seq"] = index + 1
        entry["prev_hash"] = out[index - 1]["entry_hash"] if index else "0" * 64
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = signer.sign(entry["entry_hash"])
    return out


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


def main() -> None:
    entries = build()
    log = [json.loads(msgspec.json.encode(e)) for e in entries]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "bad").mkdir(exist_ok=True)
    signer = load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    keys = {
        "root": signer.key_id,
        "keys": [
            {
                **msgspec.to_builtins(signer.public_key),
                "note_key": note_key("fairroll", signer.public_key.public_key),
                "certificate": msgspec.to_builtins(signer.certificate),
            }
        ],
    }
    write(OUT / "keys.json", json.dumps(keys, indent=2) + "\n")
    write(OUT / "log.ndjson", "".join(canonical(e).decode() + "\n" for e in entries))
    leaves = [leaf_hash(canonical(e)) for e in entries]
    stored: list[bytes] = []
    frontier = merkle.Frontier.empty()
    for item in leaves:
        frontier, new = frontier.append(item)
        stored += new

    def read(indices: Any) -> list[bytes]:
        return [stored[i] for i in indices]

    size = len(entries)
    checkpoint = sign_checkpoint(signer, TABLE, size, frontier.root(), entries[-1].entry_hash)
    write(OUT / "checkpoint.json", json.dumps(msgspec.to_builtins(checkpoint), indent=2) + "\n")

    def b64(value: bytes) -> str:
        return base64.b64encode(value).decode()

    proofs = {
        "roots": {str(n): b64(merkle.tree_hash_of(leaves[:n])) for n in range(size + 1)},
        "leaves": [b64(h) for h in leaves],
        "inclusion": [
            {
                "seq": seq,
                "size": size,
                "proof": [b64(h) for h in merkle.inclusion_proof(seq - 1, size, read)],
            }
            for seq in range(1, size + 1)
        ],
        "consistency": [
            {
                "from": old,
                "to": size,
                "proof": [b64(h) for h in merkle.consistency_proof(old, size, read)],
            }
            for old in range(1, size + 1)
        ],
    }
    write(OUT / "proofs.json", json.dumps(proofs, indent=2) + "\n")
    write(OUT / "receipts.json", json.dumps(receipts(signer, entries, read), indent=2) + "\n")
    write(OUT / "cosignatures.json", json.dumps(cosignatures(checkpoint.text), indent=2) + "\n")
    witnessed = witness_steps(signer, entries, read)
    write(OUT / "witness.json", json.dumps(witnessed, indent=2, ensure_ascii=False) + "\n")
    cases = [
        {"a": 1, "B": 2, "\u00e9": 3, "\U0001f3b2": 4, "\ue000": 5},
        {"text": 'Zoë "q" \\ \t\n\u2028\x01 \U0001f3b2', "n": [0, -1, 9007199254740991]},
        {"nested": {"z": None, "y": True, "x": [False, {}]}},
    ]
    jcs_cases = [{"value": case, "canonical": jcs(case).decode()} for case in cases]
    write(OUT / "jcs.json", json.dumps(jcs_cases, indent=2, ensure_ascii=False) + "\n")
    expected = {}
    for name, (bad, seq, reason) in tampered(log).items():
        lines = [b if isinstance(b, str) else json.dumps(b, separators=(",", ":")) for b in bad]
        write(OUT / "bad" / f"{name}.ndjson", "".join(line + "\n" for line in lines))
        expected[name] = {"first_bad_seq": seq, "reason": reason}
    write(OUT / "bad" / "expected.json", json.dumps(expected, indent=2) + "\n")


#: The rounds of the receipts' vector: the last seq of each (one note signed per round).
ROUNDS = (5, 12)
#: The vector cosigner: a player's 32-byte Ed25519 seed, public on purpose, and a time.
COSIGNER_KEY = b"fairroll cosignature vectors 001"
COSIGNER = "player-vectors"
COSIGNED_AT = 1_796_083_200


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


#: The vector witness: its 32-byte Ed25519 seed, public on purpose, and its clock.
WITNESS_KEY = b"fairroll witness vectors key 001"
WITNESS = "witness.vectors.example"


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


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.relative_to(OUT.parents[1])}")


if __name__ == "__main__":
    main()
