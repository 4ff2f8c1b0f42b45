"""docs/vectors/tiles/sets/: the vector log as a mirror serves it (C2SP tlog-tiles: its
checkpoint note, its level-0 hash tile and its entry bundle, as files), and mirrors
tampered with. Every tiles reader (``fairroll verify --tiles``, the Python client,
``verify/tiles.js``: the page and the npm client) reads each set; ``index.json`` gives
each set's verdict: ``ok``, or a phrase of the reason every reader must report, and the
checkpoint kept earlier (``kept``, a note in the set's folder) the tiles are held to."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairroll.audit import merkle, tiles
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.entry import Entry, canonical
from fairroll.audit.signing import load_signer
from vectors.fixed import TABLE

__all__ = ["write_tile_sets"]

#: A key the vectors' root never certified: a 32-byte Ed25519 seed, public on purpose.
STRANGER_KEY = base64.b64encode(b"fairroll tile vectors stranger01").decode()

Files = dict[str, bytes]


def write_tile_sets(out: Path, signer: Any, entries: list[Entry]) -> None:
    """Write every set under ``out``/tiles/sets (the folder made anew) and its index."""
    lines = [canonical(e) for e in entries]
    leaves = b"".join(merkle.leaf(line) for line in lines)
    size = len(lines)
    hash_tile = tiles.tile_path(tiles.Tile(0, 0, size))
    bundle = tiles.tile_path(tiles.Tile(tiles.ENTRIES, 0, size))

    def note(key: Any, n: int, root: bytes) -> bytes:
        head = entries[n - 1].entry_hash
        return sign_checkpoint(key, TABLE, n, root, head).text.encode()

    good: Files = {
        "checkpoint": note(signer, size, merkle.tree_hash_of([merkle.leaf(x) for x in lines])),
        hash_tile: leaves,
        bundle: tiles.frame(lines),
    }
    third = 2 + len(lines[0]) + 2 + len(lines[1]) + 2 + 10  # a byte inside entry 3
    prefix = [merkle.leaf(x) for x in lines[:5]]
    stranger = load_signer(key=STRANGER_KEY, key_file=None, dev_dir=None)
    root = merkle.tree_hash_of([merkle.leaf(x) for x in lines])
    sets: dict[str, tuple[Callable[[Files], None], dict[str, Any]]] = {
        "good": (lambda f: None, {"ok": True, "entries": size}),
        "good-kept-prefix": (
            lambda f: f.update({"kept.txt": note(signer, 5, merkle.tree_hash_of(prefix))}),
            {"ok": True, "entries": size, "kept": "kept.txt"},
        ),
        "bundle-byte-flipped": (
            lambda f: f.update({bundle: _flip(f[bundle], third)}),
            {"ok": False, "reason": f"entry 3 of {bundle} is not its leaf"},
        ),
        "bundle-entry-left-out": (
            lambda f: f.update({bundle: tiles.frame(lines[:-1])}),
            {"ok": False, "reason": f"{bundle} holds {size - 1} entries, not {size}"},
        ),
        "hash-tile-disagrees": (
            lambda f: f.update({hash_tile: leaves[:160] + merkle.leaf(b"x") + leaves[192:]}),
            {
                "ok": False,
                "reason": f"the tiles of the tree of {size} entries do not give its root",
            },
        ),
        "hash-tile-short": (
            lambda f: f.update({hash_tile: leaves[:-32]}),
            {"ok": False, "reason": f"{hash_tile} is not {size} hashes"},
        ),
        "checkpoint-by-an-uncertified-key": (
            lambda f: f.update({"checkpoint": note(stranger, size, root)}),
            {"ok": False, "reason": "no signature by"},
        ),
        "kept-checkpoint-of-another-tree": (
            lambda f: f.update({"kept.txt": note(signer, 5, b"\x05" * 32)}),
            {
                "ok": False,
                "reason": "is not the one a kept checkpoint signed",
                "kept": "kept.txt",
            },
        ),
    }
    folder = out / "tiles" / "sets"
    shutil.rmtree(folder, ignore_errors=True)
    index = {}
    for name, (tamper, verdict) in sets.items():
        files = dict(good)
        tamper(files)
        for path, data in files.items():
            target = folder / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        index[name] = verdict
        print(f"wrote {(folder / name).relative_to(out.parents[1])}/")
    (folder / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
