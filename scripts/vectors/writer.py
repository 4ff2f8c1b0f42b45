"""The writer: every file of docs/vectors/, from the good log out."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import msgspec

from fairroll.audit import merkle
from fairroll.audit.checkpoint import note_key, sign_checkpoint
from fairroll.audit.entry import Entry, canonical, jcs, leaf_hash
from fairroll.audit.signing import load_signer
from vectors.cases import cases
from vectors.fixed import OUT, TABLE, VECTOR_KEY
from vectors.formats import cosignatures, receipts, tampered, witness_steps
from vectors.logs import build
from vectors.tile_sets import write_tile_sets


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
    write_tile_sets(OUT, signer, entries)


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.relative_to(OUT.parents[1])}")


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
