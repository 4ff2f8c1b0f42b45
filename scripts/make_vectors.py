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
    KEY_RETIRE_MECHANIC,
    POLICY_MECHANIC,
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
#: Roth's client seed for each chain: a new one per chain (docs/audit.md, "Seed sessions").
CLIENT_SEEDS = ("roth-device-chain-1", "roth-device-chain-2")


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


def build(client_seeds: tuple[str, str] = CLIENT_SEEDS) -> list[Entry]:
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
    drafts += chain_drafts(client_seeds)
    entries, head = [], Head.empty()
    for index, draft in enumerate(drafts):
        entry = seal(draft, head, signer, TIME, publish=index == 0)
        entries.append(entry)
        head = Head(entry.seq, entry.entry_hash)
    return entries


def chain_drafts(client_seeds: tuple[str, str] = CLIENT_SEEDS) -> list[Draft]:
    """A hash-chain session: its commitment, two rolls, its renewal, one more roll. The
    player draws a new client seed for each chain (``client_seeds``: the first chain's,
    the second's), after it saw that chain's anchor committed."""
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
        client_seed = client_seeds[0 if chain is first else 1]
        session = Session(
            seed_id=CHAIN_ID,
            commitment=chain.anchor,
            client_seed=client_seed,
            nonce=nonce,
            link=link,
            first_nonce=start,
        )
        dice = SeededDice(committed_seed(link, client_seed, nonce))
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
    write_cases(entries, signer, checkpoint)


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


# --- Conformance cases: what every verifier must answer (docs/audit.md, "Conformance") ---

#: Outsiders' keys, public on purpose: an attacker's root, a key it certifies, a key the
#: served keys list with no certificate, and the rotated key the vector root certifies.
ATTACKER_KEY = b"fairroll vectors attacker root 1"
ATTACKER_SIGNING_KEY = b"fairroll vectors attacker key 01"
OUTSIDER_KEY = b"fairroll vectors outsider key 01"
ROTATED_KEY = b"fairroll vectors rotated key 001"
OTHER_COSIGNER_KEY = b"fairroll vectors other cosigner1"

Log = list[dict[str, Any]]
#: An operator's statement that a range of seqs was lost (docs/audit.md, "How appends
#: stay one chain").
EPOCH_MECHANIC = "audit.epoch"


class Case:
    """One conformance vector: its inputs (files written beside it) and the verdict every
    verifier must give."""

    def __init__(self, name: str, klass: str, attack: str, **expect: Any) -> None:
        self.name, self.klass, self.attack = name, klass, attack
        self.kind = "log"
        #: What a verifier needs to catch it beyond the log's own rules: ``ed25519``
        #: (a signature is all that is wrong), ``rules`` (the outcome is replayed).
        self.needs: list[str] = expect.get("needs", [])
        self.files: dict[str, str] = {}
        self.inputs: dict[str, Any] = {}
        self.expect = {
            "ok": expect.get("ok", False),
            "first_bad_seq": expect.get("seq"),
            "reason": expect.get("reason"),
            "not_fair": expect.get("not_fair", []),
        }

    def log(self, log: Log | list[str]) -> Case:
        lines = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in log]
        return self.file("log", ".ndjson", "".join(line + "\n" for line in lines))

    def file(self, role: str, suffix: str, text: str) -> Case:
        self.files[f"{self.name}{'' if role == 'log' else '.' + role}{suffix}"] = text
        self.inputs.setdefault(role, [])
        self.inputs[role].append(f"cases/{self.name}{'' if role == 'log' else '.' + role}{suffix}")
        return self

    def json_file(self, role: str, value: Any, index: int | None = None) -> Case:
        suffix = f"-{index}.json" if index is not None else ".json"
        return self.file(role, suffix, json.dumps(value, indent=2, ensure_ascii=False) + "\n")

    def entry(self) -> dict[str, Any]:
        inputs = {}
        for role, paths in self.inputs.items():
            many = role in ("checkpoints", "since", "receipts")
            inputs[role] = paths if many else paths[0]
        return {
            "name": self.name,
            "class": self.klass,
            "kind": self.kind,
            "attack": self.attack,
            "needs": self.needs,
            "inputs": {"keys": "keys.json", "root": None, **inputs},
            "expect": self.expect,
        }


def signer_of(seed: bytes, certificate_by: Any = None) -> Any:
    """A signer from a 32-byte seed, certified by ``certificate_by`` (else its own root)."""
    from fairroll.audit.signing import Signer, certify  # noqa: PLC0415

    private = Ed25519PrivateKey.from_private_bytes(seed)
    if certificate_by is None:
        return Signer(private)
    bare = Signer(private)
    return Signer(private, certify(certificate_by, bare.public_key.public_key))


def sealed(items: list[Any], start: Head | None = None) -> Log:
    """Seal drafts in order; an item is a Draft (the vector key) or (draft, signer,
    publish). The vector key publishes its certificate in the first entry it signs."""
    vector = load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    head = start or Head.empty()
    seen: set[str] = set()
    out = []
    for item in items:
        draft, signer, publish = item if isinstance(item, tuple) else (item, vector, None)
        if publish is None:
            publish = signer.key_id not in seen and head.seq == 0 and not out
        seen.add(signer.key_id)
        entry = seal(draft, head, signer, TIME, publish=publish)
        out.append(json.loads(msgspec.json.encode(entry)))
        head = Head(entry.seq, entry.entry_hash)
    return out


def rechained(log: Log, start: int, signer: Any = None, *, renumber: bool = False) -> Log:
    """The operator's rewrite from index ``start``: re-chained and re-signed (by the
    vector key, or ``signer``), so that only the semantic checks can catch it."""
    signer = signer or load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    out = copy.deepcopy(log)
    for index in range(start, len(out)):
        entry = out[index]
        if renumber:
            entry["seq"] = index + 1
        entry["prev_hash"] = out[index - 1]["entry_hash"] if index else "0" * 64
        entry["key_id"] = signer.key_id
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = signer.sign(entry["entry_hash"])
    return out


def keys_of(*signers: Any, certified: bool = True) -> dict[str, Any]:
    """``GET /v1/keys`` as a server holding these keys answers it (the first is named
    root); ``certified=False`` lists the keys after the first without a certificate."""
    keys = []
    for index, signer in enumerate(signers):
        key = {
            **msgspec.to_builtins(signer.public_key),
            "note_key": note_key("fairroll", signer.public_key.public_key),
        }
        if certified or index == 0:
            key["certificate"] = msgspec.to_builtins(signer.certificate)
        keys.append(key)
    return {"root": signers[0].key_id, "keys": keys}


def tree_of(log: Log, size: int, lost: set[int] = frozenset()) -> bytes:  # type: ignore[assignment]
    """The Merkle root of a log's first ``size`` seqs (a lost seq has its lost leaf)."""
    by_seq = {e["seq"]: e for e in log}
    leaves = [
        merkle.lost_leaf(seq) if seq in lost else leaf_hash(canonical(by_seq[seq]))
        for seq in range(1, size + 1)
    ]
    return merkle.tree_hash_of(leaves)


def checkpoint_of(
    log: Log, size: int, signer: Any = None, *, root: bytes | None = None, **options: Any
) -> dict[str, Any]:
    signer = signer or load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    lost = options.pop("lost", frozenset())
    head = options.pop("head", None) or (
        next(e["entry_hash"] for e in log if e["seq"] == size) if size else "0" * 64
    )
    tree = root if root is not None else tree_of(log, size, lost)
    made = sign_checkpoint(signer, options.pop("table", TABLE), size, tree, head, **options)
    return msgspec.to_builtins(made)  # type: ignore[no-any-return]


def rolled(
    kind: str, seed: str | None = None, dice: dict[str, list[int]] | None = None, **extra: Any
) -> Draft:
    """A TFT contest roll of source ``kind``: dice from ``seed`` or ``dice`` as given."""
    if dice is not None:
        return roll_draft(SuppliedDice(dice), kind, seed=seed, **extra)
    return roll_draft(SeededDice(seed or ""), kind, seed=seed, **extra)


def committed(seed_id: str, secret: str, client_seed: str, nonce: int, **chain: Any) -> Draft:
    """A committed roll: in a hash-chain session (``link``, ``first_nonce`` given), its
    dice derive from the link; in a commit-reveal one, from the secret server seed."""
    link = chain.get("link")
    seed = committed_seed(link or secret, client_seed, nonce)
    commitment = chain.get("anchor") or commitment_of(secret)
    session = Session(
        seed_id=seed_id,
        commitment=commitment,
        client_seed=client_seed,
        nonce=nonce,
        link=link,
        first_nonce=chain.get("first_nonce"),
    )
    return roll_draft(SeededDice(seed), "committed", session=session)


def chain_commit(seed_id: str, chain: HashChain, first_nonce: int = 1, **more: Any) -> Draft:
    request = {
        "seed_id": seed_id,
        "kind": "chain",
        "commitment": chain.anchor,
        "length": chain.length,
        "first_nonce": first_nonce,
    }
    if "previous" in more:
        return statement(RENEW_MECHANIC, {**request, "previous": more["previous"]})
    return statement(COMMIT_MECHANIC, {**request, "player": "Roth"})


def chain_roll(seed_id: str, chain: HashChain, start: int, nonce: int, client_seed: str) -> Draft:
    link = chain.link(nonce - start + 1)
    return committed(
        seed_id, "", client_seed, nonce, link=link, anchor=chain.anchor, first_nonce=start
    )


def good_drafts(client_seeds: tuple[str, str] = CLIENT_SEEDS) -> list[Draft]:
    """The good log's drafts (``build``'s), to be varied by one draft per case."""
    commitment = commitment_of(SERVER_SEED)
    return [
        roll_draft(SeededDice(DRAWN), "drawn", seed=DRAWN),
        roll_draft(SeededDice("campaign-7/roll-12"), "chosen", seed="campaign-7/roll-12"),
        roll_draft(SuppliedDice({"a": [6, 5, 5, 4, 2, 2, 1], "b": [5, 4, 4, 4]}), "supplied"),
        statement(COMMIT_MECHANIC, {"seed_id": SEED_ID, "commitment": commitment}),
        committed(SEED_ID, SERVER_SEED, "player-1", 1),
        committed(SEED_ID, SERVER_SEED, "gm", 2),
        reveal(SEED_ID, SERVER_SEED, 2),
        *chain_drafts(client_seeds),
    ]


def reveal(seed_id: str, secret: str, rolls: int, commitment: str | None = None) -> Draft:
    return statement(
        REVEAL_MECHANIC,
        {
            "seed_id": seed_id,
            "commitment": commitment or commitment_of(secret),
            "server_seed": secret,
            "rolls": rolls,
            "revealed_by": "request",
        },
    )


def varied(index: int, draft: Draft, drafts: list[Draft] | None = None) -> list[Draft]:
    out = list(drafts or good_drafts())
    out[index] = draft
    return out


def cases(log: Log, signer: Any, checkpoint: Any) -> list[Case]:  # noqa: PLR0915
    """Every conformance case, class by class (issue 38's attacks and the checks table)."""
    made: list[Case] = []

    def case(name: str, klass: str, attack: str, data: Log | list[str], **expect: Any) -> Case:
        made.append(Case(name, klass, attack, **expect).log(data))
        return made[-1]

    chosen = "campaign-7/roll-12"
    # Sources.
    for label, reason in (
        ("statement", "statement"),
        ("seeded", "seeded"),
        ("fair", "unknown dice source"),
    ):
        bad = copy.deepcopy(log)
        bad[1]["source"] = label
        case(
            f"chosen-relabelled-{label}",
            "sources",
            f"a chosen-seed roll re-signed as source {label!r}",
            rechained(bad, 1),
            seq=2,
            reason=reason,
        )
    bad = copy.deepcopy(log)
    bad[1]["source"] = "drawn"
    case(
        "chosen-relabelled-drawn",
        "sources",
        "a chosen seed passed off as drawn",
        rechained(bad, 1),
        seq=2,
        reason="not drawn",
    )
    bad = copy.deepcopy(log)
    bad[1]["seed"] = None
    case(
        "chosen-relabelled-supplied",
        "sources",
        "a seeded roll relabelled supplied (its seed dropped): supplied dice are the "
        "caller's, but the table's policy and the counts then lie",
        rechained([{**e, "source": "supplied"} if e["seq"] == 2 else e for e in bad], 1),
        ok=True,
    )
    for name, seed in (
        ("drawn-seed-not-hex", "z" * 64),
        ("drawn-seed-short", DRAWN[:62]),
        ("drawn-seed-uppercase", DRAWN.upper()),
    ):
        case(
            name,
            "sources",
            "a drawn roll whose seed is not 64 lowercase hex digits (a chosen seed, "
            "its dice re-derived from it)",
            sealed(varied(0, rolled("drawn", seed))),
            seq=1,
            reason="not drawn",
        )
    for field, kind, index, draft in (
        ("chosen_seeds", "chosen", 2, rolled("chosen", chosen)),
        ("supplied_dice", "supplied", 2, rolled("supplied", dice={"a": [6] * 7, "b": [1] * 4})),
        ("drawn_seeds", "drawn", 1, rolled("drawn", DRAWN)),
    ):
        policy = statement(POLICY_MECHANIC, {field: False})
        rest = [rolled("drawn", DRAWN), rolled("chosen", chosen)]
        rest[index - 1] = draft
        if kind == "drawn":
            rest = [draft]
        case(
            f"policy-refuses-{kind}",
            "sources",
            f"a {kind} roll on a table whose policy (seq 1) refuses {kind} rolls",
            sealed([policy, *rest]),
            seq=1 + (index if kind != "drawn" else 1),
            reason="policy",
        )
    case(
        "policy-not-first",
        "sources",
        "a table.policy statement after seq 1 (a policy changed under the players)",
        sealed([rolled("drawn", DRAWN), statement(POLICY_MECHANIC, {"chosen_seeds": False})]),
        seq=2,
        reason="policy",
    )
    # Chains.
    first, second = (HashChain(last, 2) for last in CHAIN_LASTS)
    ground = copy.deepcopy(log)
    ground[9]["session"]["link"] = "ab" * 32
    case(
        "chain-link-ground",
        "chains",
        "a chain roll's link replaced by the operator's own (dice re-derived, re-signed)",
        rechained(ground, 9),
        seq=10,
        reason="does not hash",
    )
    other = HashChain("0ff1" * 16, 2)
    drafts = good_drafts()
    drafts[9] = committed(
        CHAIN_ID,
        "",
        CLIENT_SEEDS[0],
        2,
        link=other.link(2),
        anchor=first.anchor,
        first_nonce=1,
    )
    case(
        "chain-link-from-another-chain",
        "chains",
        "a chain roll revealing a link of another chain (dice re-derived from it)",
        sealed(drafts),
        seq=10,
        reason="does not hash",
    )
    drafts = good_drafts()
    early = [
        *drafts[:9],
        chain_commit(CHAIN_ID, second, 2, previous=first.anchor),
        chain_roll(CHAIN_ID, second, 2, 2, CLIENT_SEEDS[1]),
    ]
    case(
        "chain-renewed-early",
        "chains",
        "a renewal before the chain is used up (the operator drops a chain's last link)",
        sealed(early),
        seq=10,
        reason="renew",
    )
    past = [*drafts[:10], chain_roll(CHAIN_ID, HashChain(CHAIN_LASTS[0], 3), 1, 3, "x")]
    past[-1] = committed(
        CHAIN_ID,
        "",
        CLIENT_SEEDS[0],
        3,
        link=HashChain(CHAIN_LASTS[0], 3).link(1),
        anchor=first.anchor,
        first_nonce=1,
    )
    case(
        "chain-roll-past-its-end",
        "chains",
        "a roll at a nonce past its chain's end, without a renewal",
        sealed(past),
        seq=11,
        reason="chain",
    )
    wrong_previous = copy.deepcopy(log)
    wrong_previous[10]["request"]["previous"] = "cd" * 32
    case(
        "chain-renewal-not-of-its-anchor",
        "chains",
        "a renewal whose previous anchor is not the session's",
        rechained(wrong_previous, 10),
        seq=11,
        reason="does not follow",
    )
    wrong_start = copy.deepcopy(log)
    wrong_start[11]["session"]["first_nonce"] = 1
    case(
        "chain-first-nonce-not-its-chains",
        "chains",
        "a roll on the renewed chain claiming the first chain's first nonce",
        rechained(wrong_start, 11),
        seq=12,
        reason="its chain's start",
    )
    case(
        "chain-session-never-committed",
        "chains",
        "a committed roll in a session no entry committed",
        sealed([rolled("drawn", DRAWN), chain_roll("sNeverCommitted01", first, 1, 1, "c")]),
        seq=2,
        reason="no commitment earlier",
    )
    # Client seeds.
    case(
        "client-seed-reused-across-chains",
        "client seeds",
        "the old good log: one client seed on both chains of a session, so the server "
        "knew it when it drew the second chain (not fair, still verifies)",
        [json.loads(msgspec.json.encode(e)) for e in build(("roth-device", "roth-device"))],
        ok=True,
        not_fair=[12],
    )
    third = "7e57ab1e" * 8
    case(
        "client-seed-reused-in-a-new-session",
        "client seeds",
        "a new session whose first roll uses a client seed already in the log",
        [
            *log,
            *sealed(
                [
                    statement(
                        COMMIT_MECHANIC,
                        {"seed_id": "sVectorsSession02", "commitment": commitment_of(third)},
                    ),
                    committed("sVectorsSession02", third, "player-1", 1),
                ],
                Head(12, log[-1]["entry_hash"]),
            ),
        ],
        ok=True,
        not_fair=[14],
    )
    short = (HashChain("1e9a" * 16, 1), HashChain("2e9a" * 16, 1))
    case(
        "client-seed-reused-on-chains-of-one-link",
        "client seeds",
        "a curl player rolling twice with one client seed on chains of length 1",
        sealed(
            [
                rolled("drawn", DRAWN),
                chain_commit("sShortChains0001", short[0]),
                chain_roll("sShortChains0001", short[0], 1, 1, "curl-player"),
                chain_commit("sShortChains0001", short[1], 2, previous=short[0].anchor),
                chain_roll("sShortChains0001", short[1], 2, 2, "curl-player"),
            ]
        ),
        ok=True,
        not_fair=[5],
    )
    pool = (HashChain("9001" * 16, 2), HashChain("9002" * 16, 2))
    case(
        "client-seed-reused-on-a-pre-committed-chain",
        "client seeds",
        "a pre-committed pool: two chains committed before any roll, then a roll on the "
        "second reusing the client seed a roll on the first used (after both commitments, "
        "but the server could pick the chain that grinds it)",
        sealed(
            [
                rolled("drawn", DRAWN),
                chain_commit("sPooledChain0001", pool[0]),
                chain_commit("sPooledChain0002", pool[1]),
                chain_roll("sPooledChain0001", pool[0], 1, 1, "pool-player"),
                chain_roll("sPooledChain0002", pool[1], 1, 1, "pool-player"),
            ]
        ),
        ok=True,
        not_fair=[5],
    )
    drafts = good_drafts()
    drafts[5] = committed(SEED_ID, SERVER_SEED, "player-1", 2)
    case(
        "client-seed-again-in-its-own-session-is-fair",
        "client seeds",
        "a client seed used twice after the session's commitment: fair (the server "
        "committed before it saw the seed)",
        sealed(drafts),
        ok=True,
    )
    # Nonces and seed sessions.
    skipped = [e for e in log if (e.get("session") or {}).get("nonce") != 1 or e["seq"] > 7]
    skipped = [
        {**e, "request": {**e["request"], "rolls": 1}} if e["seq"] == 7 else e for e in skipped
    ]
    case(
        "nonce-skipped",
        "nonces",
        "a committed roll the operator disliked dropped, the rest re-signed",
        rechained(skipped, 4, renumber=True),
        seq=5,
        reason="nonce 1 of seed session",
    )
    drafts = good_drafts()
    drafts[5] = committed(SEED_ID, SERVER_SEED, "gm", 1)
    case(
        "nonce-reused",
        "nonces",
        "two rolls of one session at one nonce",
        sealed(drafts),
        seq=6,
        reason="reused",
    )
    drafts = good_drafts()
    drafts[4], drafts[5] = (
        committed(SEED_ID, SERVER_SEED, "player-1", 2),
        committed(SEED_ID, SERVER_SEED, "gm", 1),
    )
    case(
        "nonce-moved",
        "nonces",
        "a roll answered at the next nonce, the nonce asked for moved after it",
        sealed(drafts),
        seq=5,
        reason="nonce 1 of seed session",
    )
    case(
        "roll-after-reveal",
        "nonces",
        "a committed roll after its session's reveal (the server seed known)",
        sealed([*good_drafts()[:7], committed(SEED_ID, SERVER_SEED, "late", 3)]),
        seq=8,
        reason="reveal",
    )
    case(
        "reveal-of-another-seed",
        "nonces",
        "a reveal whose server seed is not the committed one",
        sealed(varied(6, reveal(SEED_ID, "b0" * 32, 2, commitment_of(SERVER_SEED)))),
        seq=7,
        reason="does not match the commitment",
    )
    case(
        "reveal-miscounts-its-rolls",
        "nonces",
        "a reveal stating fewer rolls than the session made",
        sealed(varied(6, reveal(SEED_ID, SERVER_SEED, 1))),
        seq=7,
        reason="rolls",
    )
    wrong_die = good_drafts()
    wrong_die[4] = roll_draft(
        SuppliedDice({"a": [6] * 7, "b": [1] * 4}),
        "committed",
        session=Session(
            seed_id=SEED_ID, commitment=commitment_of(SERVER_SEED), client_seed="player-1", nonce=1
        ),
    )
    case(
        "committed-die-not-derived",
        "nonces",
        "a committed roll's dice chosen by the operator: caught at the reveal, named at "
        "the roll's seq",
        sealed(wrong_die),
        seq=5,
        reason="does not derive",
    )
    # Entries: edits, order, signatures.
    edited = copy.deepcopy(log)
    edited[1]["outcome"]["a_dice"] = 9
    case(
        "edited-outcome",
        "edits",
        "an outcome edited in place",
        edited,
        seq=2,
        reason="entry_hash does not match",
    )
    die = copy.deepcopy(log)
    die[1]["dice"][0]["face"] = die[1]["dice"][0]["face"] % 6 + 1
    case(
        "die-edited-and-resigned",
        "edits",
        "a die edited, the log re-chained and re-signed",
        rechained(die, 1),
        seq=2,
        reason="does not derive",
    )
    zeroed = copy.deepcopy(log)
    zeroed[2]["signature"] = base64.b64encode(bytes(64)).decode()
    case(
        "signature-zeroed",
        "edits",
        "an entry's signature zeroed",
        zeroed,
        seq=3,
        reason="signature",
        needs=["ed25519"],
    )
    swapped = copy.deepcopy(log)
    swapped[4], swapped[5] = swapped[5], swapped[4]
    case(
        "entries-swapped",
        "edits",
        "two entries exchanged in the export",
        swapped,
        seq=5,
        reason="seq",
    )
    moved_table = copy.deepcopy(log)
    moved_table[3]["table"] = "elsewhere"
    case(
        "entry-of-another-table",
        "edits",
        "an entry of another table spliced in (re-signed)",
        rechained(moved_table, 3),
        seq=4,
        reason="table",
    )
    outcome = copy.deepcopy(log)
    outcome[2]["outcome"]["winner"] = "b" if outcome[2]["outcome"].get("winner") == "a" else "a"
    case(
        "outcome-not-the-rules-and-resigned",
        "edits",
        "an outcome the rules do not give for its dice (re-signed; supplied dice)",
        rechained(outcome, 2),
        seq=3,
        reason="outcome",
        needs=["rules"],
    )
    # Duplicates.
    lines = [json.dumps(e, separators=(",", ":")) for e in log]
    twice = [*lines]
    twice[2] = twice[2][:-1] + ',"seq":3}'
    case("duplicate-key", "duplicates", "a JSON key twice (seq)", twice, seq=3, reason="twice")
    nested = [*lines]
    nested[1] = nested[1].replace('"request":{', '"request":{"a":{"attribute":3},', 1)
    case(
        "duplicate-key-nested",
        "duplicates",
        "a JSON key twice inside the request (parsers keep one or the other)",
        nested,
        seq=2,
        reason="twice",
    )
    # Deletions, forks, truncations.
    case(
        "deleted-entry",
        "deletions",
        "an entry deleted from the middle",
        [*log[:2], *log[3:]],
        seq=3,
        reason="seq 3 is missing",
    )
    fork = sealed([*good_drafts()[:4], committed(SEED_ID, SERVER_SEED, "player-1", 1)])
    forked = sealed([*good_drafts()[:4], rolled("drawn", "11" * 32)])
    case(
        "fork-two-entries-at-one-seq",
        "forks",
        "two entries at seq 5, each chained on seq 4",
        [*fork, forked[4], *log[5:]],
        seq=6,
        reason="seq",
    )
    rewritten = copy.deepcopy(log)
    rewritten[7]["request"]["player"] = "Someone else"
    split = case(
        "fork-against-kept-checkpoint",
        "forks",
        "a log rewritten after seq 8 and re-signed, against the checkpoint kept of the "
        "original (a split view)",
        rechained(rewritten, 7),
        seq=12,
        reason="root",
    )
    split.json_file("checkpoints", msgspec.to_builtins(checkpoint), 1)
    cut = case(
        "truncated-against-kept-checkpoint",
        "truncations",
        "the log's last two entries cut, against the checkpoint kept at size 12",
        log[:10],
        seq=11,
        reason="truncated",
    )
    cut.json_file("checkpoints", msgspec.to_builtins(checkpoint), 1)
    kept_receipt = {"seq": 12, "entry_hash": log[11]["entry_hash"], "table": TABLE}
    cut = case(
        "truncated-against-kept-receipt",
        "truncations",
        "the log's last entry cut, against the receipt kept of it",
        log[:11],
        seq=12,
        reason="truncated",
    )
    cut.json_file("receipts", kept_receipt, 1)
    # Checkpoints.
    good = case(
        "checkpoint-kept-and-matching",
        "checkpoints",
        "the good log and its checkpoint (nothing wrong)",
        log,
        ok=True,
    )
    good.json_file("checkpoints", msgspec.to_builtins(checkpoint), 1)
    good = case(
        "checkpoint-kept-since",
        "checkpoints",
        "the good log grown from a checkpoint kept at size 5",
        log,
        ok=True,
    )
    good.json_file("since", checkpoint_of(log, 5), 1)
    two = case(
        "two-checkpoints-of-one-size",
        "checkpoints",
        "two checkpoints of size 12 with different roots, both signed by the log's key",
        log,
        seq=12,
        reason="kept checkpoint",
    )
    two.json_file("checkpoints", checkpoint_of(log, 12, root=b"\x07" * 32), 1)
    two.json_file("checkpoints", msgspec.to_builtins(checkpoint), 2)
    outsider = signer_of(OUTSIDER_KEY)
    forged = rechained(sixes(log, 2), 2)
    for entry in forged:
        entry["signature"] = base64.b64encode(bytes(64)).decode()
    stand_in = case(
        "checkpoint-by-an-unpublished-key",
        "checkpoints",
        "a forged log (signatures zeroed) with a checkpoint signed by a key only the "
        "keys file names, standing in for every entry's signature",
        forged,
        seq=1,
        reason="signature",
        needs=["ed25519"],
    )
    stand_in.json_file("keys", keys_of(signer, outsider, certified=False))
    stand_in.json_file("checkpoints", checkpoint_of(forged, 12, outsider), 1)
    # Keys and roots.
    attacker = signer_of(ATTACKER_KEY)
    resigned_log = copy.deepcopy(log)
    resigned_log[0]["certificate"] = msgspec.to_builtins(attacker.certificate)
    resigned_log[1]["dice"][0]["face"] = resigned_log[1]["dice"][0]["face"]
    self_certified = case(
        "self-certified-key-in-entry-1",
        "keys and roots",
        "the whole log re-signed by an attacker's key that certifies itself in entry 1 "
        "(and the served keys list it as root)",
        rechained(resigned_log, 0, attacker),
        seq=1,
        reason="root",
    )
    self_certified.json_file("keys", keys_of(attacker))
    by_other = signer_of(ATTACKER_SIGNING_KEY, attacker)
    other_root = copy.deepcopy(log)
    other_root[0]["certificate"] = msgspec.to_builtins(by_other.certificate)
    other = case(
        "key-certified-by-another-root",
        "keys and roots",
        "the log signed by a key whose certificate another root signed",
        rechained(other_root, 0, by_other),
        seq=1,
        reason="root",
    )
    other.json_file("keys", keys_of(attacker, by_other))
    rotated = signer_of(ROTATED_KEY, signer)
    retire = statement(KEY_RETIRE_MECHANIC, {"key_id": signer.key_id})
    rotation = [
        rolled("drawn", DRAWN),
        (rolled("chosen", chosen), rotated, True),
        (retire, rotated, False),
        (rolled("drawn", "22" * 32), rotated, False),
    ]
    ok_rotation = case(
        "key-rotated-and-retired",
        "keys and roots",
        "a key rotation: a new key certified by the root, published in its first entry, "
        "the old key retired (nothing wrong)",
        sealed(rotation),
        ok=True,
    )
    ok_rotation.json_file("keys", keys_of(signer, rotated))
    retired = case(
        "retired-key-signing",
        "keys and roots",
        "an entry signed by a key after its key.retire entry",
        sealed([*rotation, rolled("drawn", "33" * 32)]),
        seq=5,
        reason="after its retirement",
    )
    retired.json_file("keys", keys_of(signer, rotated))
    early_key = case(
        "key-used-before-it-is-published",
        "keys and roots",
        "an entry signed by a certified key before the entry that publishes it",
        sealed(
            [
                rolled("drawn", DRAWN),
                (rolled("drawn", "44" * 32), rotated, False),
                (rolled("chosen", chosen), rotated, True),
            ]
        ),
        seq=2,
        reason="did not publish",
    )
    early_key.json_file("keys", keys_of(signer, rotated))
    # Epochs and archives.
    head3 = sealed(good_drafts()[:3])
    epoch = statement(
        EPOCH_MECHANIC, {"lost_after": 3, "resume_after": 6, "reason": "a Redis failover"}
    )
    after = sealed([epoch, rolled("drawn", "55" * 32)], Head(6, head3[-1]["entry_hash"]))
    lost = {4, 5, 6}
    case(
        "epoch-declares-a-lost-range",
        "epochs and archives",
        "seqs 4..6 declared lost by an epoch (nothing wrong)",
        [*head3, *after],
        ok=True,
    )
    wrong_gap = sealed([epoch, rolled("drawn", "55" * 32)], Head(7, head3[-1]["entry_hash"]))
    case(
        "epoch-gap-not-the-declared-one",
        "epochs and archives",
        "an epoch at a seq that is not the end of the range it declares lost",
        [*head3, *wrong_gap],
        seq=4,
        reason="seq 4 is missing",
    )
    original = sealed(good_drafts()[:6])
    kept = checkpoint_of(original, 5)
    forged_epoch = sixes([*head3, *after], 2)
    forged_epoch = rechained(forged_epoch, 2)
    forged_epoch[2]["signature"] = base64.b64encode(bytes(64)).decode()
    hidden = case(
        "forgery-behind-a-lost-range",
        "epochs and archives",
        "a kept checkpoint of a size inside a declared-lost range, and a forged "
        "signature at seq 3 before it",
        forged_epoch,
        seq=3,
        reason="signature",
        needs=["ed25519"],
    )
    hidden.json_file("since", kept, 1)
    del lost
    base = checkpoint_of(log, 5, frontier=frontier_of(log, 5))
    archived = case(
        "archive-base-and-the-rest",
        "epochs and archives",
        "an archived log: its base at seq 5 and entries 6..12 (nothing wrong)",
        log[5:],
        ok=True,
    )
    archived.json_file("base", base)
    unchained = case(
        "archive-base-does-not-chain",
        "epochs and archives",
        "entries 6..12 given with a base whose head is not seq 5's entry",
        log[5:],
        seq=6,
        reason="prev_hash",
    )
    unchained.json_file("base", checkpoint_of(log, 5, frontier=frontier_of(log, 5), head="ee" * 32))
    made += receipt_cases(log, signer)
    made += cosignature_cases(checkpoint.text)
    return made


def sixes(log: Log, index: int) -> Log:
    """The supplied roll at ``index`` with every die a 6 and the outcome the rules give
    for them: only its signature can tell it from the operator's (zeroed below)."""
    out = copy.deepcopy(log)
    entry = out[index]
    groups = ("a", "b")
    faces = {g: [6] * sum(d.get("group") == g for d in entry["dice"]) for g in groups}
    draft = roll_draft(SuppliedDice(faces), "supplied")
    entry["dice"] = msgspec.to_builtins(draft.dice)
    entry["outcome"] = msgspec.to_builtins(draft.outcome)
    return out


def frontier_of(log: Log, size: int) -> list[bytes]:
    frontier = merkle.Frontier.empty()
    for entry in log[:size]:
        frontier, _ = frontier.append(leaf_hash(canonical(entry)))
    return list(frontier.hashes)


def receipt_cases(log: Log, signer: Any) -> list[Case]:
    """Receipts: the good one, and each way of forging one."""
    leaves = [leaf_hash(canonical(e)) for e in log]
    stored: list[bytes] = []
    frontier = merkle.Frontier.empty()
    for item in leaves:
        frontier, new = frontier.append(item)
        stored += new

    def read(indices: Any) -> list[bytes]:
        return [stored[i] for i in indices]

    def receipt(seq: int, by: Any = None, table: str = TABLE, size: int = 12) -> dict[str, Any]:
        note = checkpoint_of(log, size, by, table=table)["text"]
        proof = merkle.inclusion_proof(seq - 1, size, read)
        entry = msgspec.json.decode(json.dumps(log[seq - 1]).encode(), type=Entry)
        made = receipt_of(entry, leaves[seq - 1], checkpoint=(note, size), proof=proof)
        return msgspec.to_builtins(made)  # type: ignore[no-any-return]

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
    made = []
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


def cosignature_cases(note: str) -> list[Case]:
    """A player's cosignature of the checkpoint, and each way of forging one."""
    private = Ed25519PrivateKey.from_private_bytes(COSIGNER_KEY)
    raw = raw_public_key(private)
    vkey = verifier_key(COSIGNER, raw)
    line = cosign(note, COSIGNER, private, COSIGNED_AT)
    other = cosign(
        note, COSIGNER, Ed25519PrivateKey.from_private_bytes(OTHER_COSIGNER_KEY), COSIGNED_AT
    )
    stamped = base64.b64decode(line.rsplit(" ", 1)[1])
    later = stamped[:4] + (COSIGNED_AT + 1).to_bytes(8, "big") + stamped[12:]
    late = f"\u2014 {COSIGNER} {base64.b64encode(later).decode()}"
    body = note.partition("\n\n")[0]
    kinds = [
        (
            "cosignature-good",
            "a player's cosignature of the checkpoint (nothing wrong)",
            note + line + "\n",
            None,
        ),
        (
            "cosignature-time-altered",
            "the cosignature's time moved one second",
            note + late + "\n",
            "cosign",
        ),
        (
            "cosignature-other-keys-line-under-its-name",
            "another key's cosignature line under the player's name",
            note + other + "\n",
            "cosign",
        ),
        (
            "cosignature-body-altered",
            "the note's size edited under the cosignature",
            body.replace("\n12\n", "\n13\n", 1) + "\n\n" + note.partition("\n\n")[2] + line + "\n",
            "sign",
        ),
        (
            "cosignature-good-line-then-bad-line",
            "a good line of the player's key, then a bad line of the same key",
            note + line + "\n" + late + "\n",
            "cosign",
        ),
        (
            "cosignature-bad-line-then-good-line",
            "a bad line of the player's key, then a good line of the same key",
            note + late + "\n" + line + "\n",
            "cosign",
        ),
    ]
    made = []
    for name, attack, text, reason in kinds:
        item = Case(name, "cosignatures", attack, ok=reason is None, reason=reason)
        item.kind = "cosignature"
        item.file("note", ".txt", text)
        item.inputs["vkey"] = [vkey]
        made.append(item)
    return made


def write_cases(entries: list[Entry], signer: Any, checkpoint: Any) -> None:
    """docs/vectors/cases/: each case's files, and index.json (their inputs and verdicts)."""
    folder = OUT / "cases"
    folder.mkdir(exist_ok=True)
    log = [json.loads(msgspec.json.encode(e)) for e in entries]
    made = cases(log, signer, checkpoint)
    names = [c.name for c in made]
    if len(names) != len(set(names)):
        raise ValueError("two cases of one name")
    for stale in folder.iterdir():
        if stale.name != "index.json" and not any(stale.name in c.files for c in made):
            stale.unlink()
    for item in made:
        for name, text in item.files.items():
            write(folder / name, text)
    index = {"root": signer.key_id, "cases": [c.entry() for c in made]}
    for entry in index["cases"]:
        entry["inputs"]["root"] = signer.key_id
    write(folder / "index.json", json.dumps(index, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
