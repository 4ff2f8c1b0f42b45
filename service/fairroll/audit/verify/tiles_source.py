"""A table's log read from its tiles (C2SP tlog-tiles, ``audit.tiles``) instead of its
export: from the server's ``/v1/tables/<table>/log`` or from a mirror any static web
server serves (``fairroll mirror``). The reading only: the entries it rebuilds go to the
one verification core (this package's ``run``) as an export's lines would, with the
checkpoint it read as a kept checkpoint, so a log verifies the same from either source.

What a reader of tiles checks before the core sees an entry, in order:

1. the ``checkpoint`` is a note of the log's origin (``<log name>/<table>``) signed by a
   trusted key (given ``keys``: key id -> base64 public key, those the pinned root
   certified); its size and root are the tree to read;
2. every full hash tile hashes to its hash in the tile above, and the tiles fold to the
   checkpoint's root (``tiles.verify_tiles``): a hash tile that disagrees is named;
3. every entry bundle holds as many entries as its level-0 tile has hashes, each one
   hashing to its leaf (``tiles.check_bundle``): a flipped byte in a bundle is named;
4. a seq an epoch declared lost is bundled as its placeholder leaf's bytes: it is left
   out, as the export leaves it out (the epoch entry declares the gap, the core checks it).

Consistency with a checkpoint kept earlier is the core's (checks table, row 14): the tree
the entries grow must hold each kept root at its size. A bundle a server no longer serves
(archived entries) stops the reading: verify that range from its archive.
"""

from __future__ import annotations

import base64
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fairroll.audit import merkle, note, tiles
from fairroll.audit.checkpoint import parse_body
from fairroll.audit.tiles import ENTRIES, Tile, TileError

__all__ = ["Load", "TileError", "TilesLog", "loader", "read_log"]

#: Gives the bytes at a path relative to the log's prefix (``checkpoint``,
#: ``tile/0/000``); ``TileError`` for a file that is not there.
Load = Callable[[str], bytes]


@dataclass(frozen=True, slots=True)
class TilesLog:
    """A log as its tiles hold it: the ``note`` read (every signature line kept), its
    tree's ``size`` and ``root``, the ``key_id`` that signed it (None when no keys were
    given: then nothing is signed), and the entries' exported ``lines`` in seq order."""

    note: str
    size: int
    root: bytes
    key_id: str | None
    lines: list[bytes]

    def ndjson(self) -> bytes:
        """The entries as ``GET .../export`` gives them."""
        return b"".join(line + b"\n" for line in self.lines)


def read_log(load: Load, keys: Mapping[str, str] | None, *, table: str | None = None) -> TilesLog:
    """The log whose tiles ``load`` reads, checked as the module says; ``TileError``
    naming the first file that is not what the signed checkpoint says (``note.NoteError``
    for a checkpoint no trusted key signed). ``table``: the table the log must be."""
    try:
        text = load("checkpoint").decode("utf-8")
    except UnicodeDecodeError:
        raise TileError("the checkpoint is not UTF-8 text") from None
    origin = text.split("\n", 1)[0]
    name, _, named = origin.rpartition("/")
    if table is not None and named != table:
        raise TileError(f"the checkpoint's origin {origin!r} is not table {table}'s log")
    key_id = None
    if keys is None:
        body = text[: text.rfind("\n\n") + 1]
    else:
        verifiers = {
            note.SignerVerifier(name, base64.b64decode(public)): key for key, public in keys.items()
        }
        opened = note.open_note(text, verifiers)
        body = opened.text
        key_id = next(k for v, k in verifiers.items() if v.key_hash == opened.sigs[0].key_hash)
    size, root, _ = parse_body(body)
    hashes = tiles.TileHashes(size, lambda tile: load(tiles.tile_path(tile)))
    tiles.verify_tiles(hashes, root)
    lines = []
    for tile in tiles.tiles_of(size):
        if tile.level != 0:
            continue
        bundle = Tile(ENTRIES, tile.n, tile.width)
        entries = tiles.check_bundle(bundle, load(tiles.tile_path(bundle)), hashes.tile(0, tile.n))
        for seq, data in zip(tiles.bundle_seqs(bundle), entries, strict=True):
            if data != merkle.LOST_PREFIX + str(seq).encode():
                lines.append(data)
    return TilesLog(note=text, size=size, root=root, key_id=key_id, lines=lines)


def loader(location: str, *, timeout: float = 30) -> Load:
    """A ``Load`` of the log at ``location``: an ``http(s)://`` URL of its prefix (the
    server's ``.../v1/tables/<table>/log``, or a mirror's root on any static host), or a
    mirror's directory."""
    if location.startswith(("http://", "https://")):
        prefix = location.rstrip("/")

        def fetch(path: str) -> bytes:
            url = f"{prefix}/{path}"
            try:
                with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310
                    data: bytes = answer.read()
            except urllib.error.HTTPError as refused:
                raise TileError(f"{path} is not served ({refused.code} from {url})") from None
            return data

        return fetch
    folder = Path(location)

    def read(path: str) -> bytes:
        try:
            return (folder / path).read_bytes()
        except FileNotFoundError:
            raise TileError(f"{path} is not in the mirror {folder}") from None

    return read
