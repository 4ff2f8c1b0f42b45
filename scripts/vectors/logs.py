"""Logs built from drafts: the good log, logs sealed from any drafts (by the vector key
or another signer), the operator's rewrites re-chained and re-signed, and the keys,
trees and checkpoints a verifier is handed beside a log."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import merkle
from fairroll.audit.checkpoint import note_key, sign_checkpoint
from fairroll.audit.entry import (
    COMMIT_MECHANIC,
    REVEAL_MECHANIC,
    Entry,
    Head,
    Session,
    canonical,
    chain_hash,
    jcs,
    leaf_hash,
)
from fairroll.audit.signing import load_signer, seal
from fairroll.randomness import SeededDice, SuppliedDice, commitment_of, committed_seed
from vectors.drafts import chain_drafts, roll_draft, statement
from vectors.fixed import CLIENT_SEEDS, DRAWN, SEED_ID, SERVER_SEED, TABLE, TIME, VECTOR_KEY, Log


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
    out: Log = []
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


def lone_surrogate_at(log: Log, index: int, place: Any) -> list[Any]:
    """The operator's rewrite with a lone surrogate in entry ``index``, where ``place``
    (entry, mark) puts it, sealed the JavaScript way: ``JSON.stringify`` writes it as the
    escape ``\\ud800``, so its hash is defined over that escape, though the string has no
    UTF-8 form (Python's JCS refuses it; ``TextEncoder`` would write U+FFFD, so two seeds
    would share their dice). The entries after it are re-chained and re-signed on it; the
    line is written with the escape."""
    signer = load_signer(key=VECTOR_KEY, key_file=None, dev_dir=None)
    mark = "QQLONESURROGATEQQ"
    out = copy.deepcopy(log)
    entry = out[index]
    place(entry, mark)
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    raw = jcs(body).replace(mark.encode(), b"\\ud800")
    entry["entry_hash"] = hashlib.sha256(bytes.fromhex(entry["prev_hash"]) + raw).hexdigest()
    entry["signature"] = signer.sign(entry["entry_hash"])
    out = rechained(out, index + 1)
    lines: list[Any] = list(out)
    lines[index] = json.dumps(entry, separators=(",", ":")).replace(mark, "\\ud800")
    return lines
