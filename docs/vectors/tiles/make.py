"""Write tiles.json: the C2SP tlog-tiles vector of docs/audit.md ("Tiles").

Run: python docs/vectors/tiles/make.py   (tests/test_tiles.py fails when it drifts)

Two trees, each with its tile paths and what each tile holds:

- ``log``: the vector log (docs/vectors/log.ndjson, one entry a line) as a server
  serves it: its checkpoint's size and root, every hash tile's hashes (base64) and its
  entry bundle (base64 of the framed bytes).
- ``made_up``: a tree of 70000 leaves, leaf ``i`` the entry of the 4 bytes of ``i``
  big-endian (the spec's own example size): every tile's path, width and the SHA-256
  of its bytes, and the root. It has tiles at three levels, full and partial.

And ``paths``: tile indices written as the spec writes them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from fairroll.audit import merkle, tiles

HERE = Path(__file__).resolve().parent
LOG = HERE.parent / "log.ndjson"
MADE_UP = 70000


def tree_of(entries: list[bytes]) -> tuple[list[bytes], bytes]:
    """The stored hashes (``merkle.stored_index`` order) and root of a log."""
    frontier, stored = merkle.Frontier.empty(), []
    for data in entries:
        frontier, new = frontier.append(merkle.leaf(data))
        stored += new
    return stored, frontier.root()


def tile_bytes(stored: list[bytes], tile: tiles.Tile) -> bytes:
    return b"".join(stored[i] for i in tiles.hash_indices(tile))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def vector() -> dict[str, Any]:
    lines = LOG.read_bytes().splitlines()
    stored, root = tree_of(lines)
    log_tiles = [
        {
            "path": tiles.tile_path(tile),
            "hashes": [b64(h) for h in (stored[i] for i in tiles.hash_indices(tile))],
        }
        for tile in tiles.tiles_of(len(lines))
    ]
    bundles = [
        {
            "path": tiles.tile_path(tiles.Tile(tiles.ENTRIES, t.n, t.width)),
            "bytes": b64(tiles.frame(lines[t.n * tiles.WIDTH : t.n * tiles.WIDTH + t.width])),
        }
        for t in tiles.tiles_of(len(lines))
        if t.level == 0
    ]
    made, made_root = tree_of([i.to_bytes(4, "big") for i in range(MADE_UP)])
    return {
        "log": {
            "source": "docs/vectors/log.ndjson",
            "size": len(lines),
            "root": b64(root),
            "tiles": log_tiles,
            "bundles": bundles,
        },
        "made_up": {
            "leaf": "entry i is the 4 bytes of i, big-endian",
            "size": MADE_UP,
            "root": b64(made_root),
            "tiles": [
                {
                    "path": tiles.tile_path(tile),
                    "width": tile.width,
                    "sha256": hashlib.sha256(tile_bytes(made, tile)).hexdigest(),
                }
                for tile in tiles.tiles_of(MADE_UP)
            ],
        },
        "paths": {
            str(n): tiles.tile_path(tiles.Tile(0, n)) for n in (0, 5, 999, 1000, 1234067, 10**9 + 7)
        },
    }


def text() -> str:
    return json.dumps(vector(), indent=1) + "\n"


if __name__ == "__main__":
    (HERE / "tiles.json").write_text(text())
