"""A table's log as C2SP ``tlog-tiles`` (https://c2sp.org/tlog-tiles): the tree's hashes
and the entries cut into static, immutable files that any web server can serve.

Tiles have height 8: a tile holds up to 256 hashes. Hash ``i`` of tile ``n`` at tile
level ``L`` is the Merkle tree hash of leaves ``(n*256 + i) * 256**L`` up to (not
including) ``(n*256 + i + 1) * 256**L``: a complete subtree of Merkle level ``8*L``, so
every hash of every tile is one hash the table's tree already keeps
(``merkle.stored_index(8*L, n*256 + i)``). A tile is a read of stored hashes, never a
computation, and the roll path does nothing for tiles.

Paths, relative to a log's prefix (``/v1/tables/<table>/log``)::

    tile/<L>/<N>[.p/<W>]        hashes: <W> (1..255) in a partial tile, 256 in a full one
    tile/entries/<N>[.p/<W>]    entry bundle: the entries of the level-0 tile <N>

``<N>`` is written in 3-digit groups, every group but the last prefixed with ``x``
(1234067 is ``x001/x234/067``), so a directory never holds a file and a folder of the
same name. A tile is partial when the tree's size ends inside it: the tree of ``s``
leaves has at level ``L`` the full tiles ``0 .. s // 256**(L+1) - 1`` and, if
``(s // 256**L) % 256`` is not 0, one partial tile of that width.

A bundle is its entries, each as a big-endian uint16 length then the entry's bytes: the
exported line of the entry (its JCS bytes), so SHA-256(0x00 || bytes) is its hash in the
level-0 tile. A seq an epoch declared lost is framed as the bytes its placeholder leaf
hashes (``fairroll/lost/v1:<seq>``, ``merkle.lost_leaf``).

>>> tile_path(Tile(0, 1234067))
'tile/0/x001/x234/067'
>>> tile_path(Tile(ENTRIES, 5, 7))
'tile/entries/005.p/7'
>>> parse_tile_path("tile/1/x001/002.p/3")
Tile(level=1, n=1002, width=3)
>>> [tile_path(t) for t in tiles_of(70000) if t.width < WIDTH]
['tile/0/273.p/112', 'tile/1/001.p/17', 'tile/2/000.p/1']
>>> unframe(frame([b"ab", b""]))
[b'ab', b'']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from fairroll.audit import merkle

__all__ = [
    "ENTRIES",
    "HEIGHT",
    "MAX_ENTRY_BYTES",
    "WIDTH",
    "Tile",
    "TileError",
    "TileHashes",
    "bundle_seqs",
    "check_bundle",
    "check_in_tree",
    "frame",
    "hash_indices",
    "new_tiles",
    "parse_tile_path",
    "split_stored_index",
    "tile_hash",
    "tile_path",
    "tiles_of",
    "unframe",
    "verify_tiles",
]

HEIGHT = 8
WIDTH = 1 << HEIGHT
#: The level of an entry bundle (``tile/entries/...``), which is not a hash tile's.
ENTRIES = -1
#: A bundle frames each entry with a uint16 length.
MAX_ENTRY_BYTES = 0xFFFF
#: The highest tile level a path may name (the spec's limit).
MAX_LEVEL = 63

_PATH = re.compile(
    r"tile/(?P<level>entries|0|[1-9][0-9]?)/(?P<n>(?:x[0-9]{3}/)*[0-9]{3})"
    r"(?:\.p/(?P<width>[1-9][0-9]{0,2}))?"
)


class TileError(ValueError):
    """A tile path that is not one, or a tile a tree of that size does not have."""


@dataclass(frozen=True, slots=True)
class Tile:
    """Tile ``n`` at tile level ``level`` (``ENTRIES`` for an entry bundle), ``width``
    hashes (or entries) wide: ``WIDTH`` when full."""

    level: int
    n: int
    width: int = WIDTH

    @property
    def full(self) -> bool:
        return self.width == WIDTH


def tile_path(tile: Tile) -> str:
    """The tile's path relative to the log's prefix."""
    digits = f"{tile.n:03d}"
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    n = "/".join([*(f"x{g}" for g in groups[:-1]), groups[-1]])
    level = "entries" if tile.level == ENTRIES else str(tile.level)
    suffix = "" if tile.full else f".p/{tile.width}"
    return f"tile/{level}/{n}{suffix}"


def parse_tile_path(path: str) -> Tile:
    """The tile a path names; ``TileError`` unless it is written as the spec writes it
    (no leading zeroes but the groups', ``x`` on every group but the last)."""
    match = _PATH.fullmatch(path)
    if match is None:
        raise TileError(f"not a tile path: {path!r}")
    level = ENTRIES if match["level"] == "entries" else int(match["level"])
    if level > MAX_LEVEL:
        raise TileError(f"tile level {level} is above {MAX_LEVEL}")
    n = int(match["n"].replace("x", "").replace("/", ""))
    width = int(match["width"]) if match["width"] else WIDTH
    if match["width"] and width >= WIDTH:
        raise TileError(f"a partial tile has 1 to {WIDTH - 1} hashes, not {width}")
    tile = Tile(level, n, width)
    if tile_path(tile) != path:  # e.g. "x000/001": a leading zero group
        raise TileError(f"not a tile path as the spec writes it: {path!r}")
    return tile


def tiles_of(size: int) -> list[Tile]:
    """Every hash tile the tree of ``size`` leaves has (full, then partial, per level),
    and no entry bundle.

    >>> [tile_path(t) for t in tiles_of(256)]
    ['tile/0/000', 'tile/1/000.p/1']
    """
    out = []
    level = 0
    while size >> (HEIGHT * level):
        count = size >> (HEIGHT * level)
        out += [Tile(level, n) for n in range(count // WIDTH)]
        if count % WIDTH:
            out.append(Tile(level, count // WIDTH, count % WIDTH))
        level += 1
    return out


def new_tiles(old: int, new: int) -> list[Tile]:
    """The hash tiles of the tree of ``new`` leaves a copy of the tree of ``old`` lacks:
    each whose width grew (a mirror fetches only these).

    >>> [tile_path(t) for t in new_tiles(256, 258)]
    ['tile/0/001.p/2']
    """
    if not 0 <= old <= new:
        raise TileError(f"no tiles from size {old} to size {new}")
    had = {(t.level, t.n): t.width for t in tiles_of(old)}
    return [t for t in tiles_of(new) if had.get((t.level, t.n), 0) < t.width]


def check_in_tree(tile: Tile, size: int) -> None:
    """``TileError`` unless the tree of ``size`` leaves holds every hash of ``tile``."""
    level = 0 if tile.level == ENTRIES else tile.level
    if (tile.n * WIDTH + tile.width) << (HEIGHT * level) > size:
        raise TileError(f"the tree of {size} entries has no {tile_path(tile)}")


def hash_indices(tile: Tile) -> list[int]:
    """Where the tree keeps the hashes of a hash tile (``merkle.stored_index``), in order.

    >>> hash_indices(Tile(1, 0, 2)) == [merkle.stored_index(8, 0), merkle.stored_index(8, 1)]
    True
    """
    if tile.level == ENTRIES:
        raise TileError("an entry bundle holds entries, not hashes")
    first = tile.n * WIDTH
    return [merkle.stored_index(HEIGHT * tile.level, first + i) for i in range(tile.width)]


def bundle_seqs(tile: Tile) -> range:
    """The seqs of a bundle's entries (leaf ``i`` is seq ``i + 1``).

    >>> bundle_seqs(Tile(ENTRIES, 1, 3))
    range(257, 260)
    """
    first = tile.n * WIDTH + 1
    return range(first, first + tile.width)


def frame(entries: Sequence[bytes]) -> bytes:
    """An entry bundle: each entry as a big-endian uint16 length, then its bytes;
    ``TileError`` for an entry longer than a uint16 can say."""
    out = bytearray()
    for data in entries:
        if len(data) > MAX_ENTRY_BYTES:
            raise TileError(f"an entry of {len(data)} bytes does not fit a bundle's frame")
        out += len(data).to_bytes(2, "big") + data
    return bytes(out)


def unframe(bundle: bytes) -> list[bytes]:
    """A bundle's entries; ``TileError`` if a frame runs past the end."""
    out, at = [], 0
    while at < len(bundle):
        if at + 2 > len(bundle):
            raise TileError("a bundle ends inside an entry's length")
        length = int.from_bytes(bundle[at : at + 2], "big")
        if at + 2 + length > len(bundle):
            raise TileError("a bundle ends inside an entry")
        out.append(bundle[at + 2 : at + 2 + length])
        at += 2 + length
    return out


def split_stored_index(index: int) -> tuple[int, int]:
    """(Merkle level, n) of the hash kept at ``index``: the inverse of
    ``merkle.stored_index``.

    >>> split_stored_index(merkle.stored_index(3, 5))
    (3, 5)
    """
    # Leaf n is kept at stored_index(0, n) <= index < 2 * n + 1 + its subtrees: start
    # below and walk up to the last leaf kept at or before ``index``.
    n = index // 2
    at = merkle.stored_index(0, n)
    while True:
        following = at + 1 + ((n + 1) & -(n + 1)).bit_length() - 1
        if following > index:
            break
        n, at = n + 1, following
    level = index - at
    return level, n >> level


def tile_hash(data: bytes) -> bytes:
    """The Merkle tree hash of a run of hashes (a power of two of them): what a full
    tile is, one level up."""
    hashes = [data[i : i + merkle.HASH_SIZE] for i in range(0, len(data), merkle.HASH_SIZE)]
    while len(hashes) > 1:
        hashes = [merkle.node(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]


class TileHashes:
    """Every hash of the tree of ``size`` leaves, read from its tiles (``load`` gives a
    tile's bytes, asked for each tile once): a ``merkle.Reader``, so roots and proofs
    are computed from tiles as from the stored tree. The hashes are only as good as the
    tiles: ``verify_tiles`` first."""

    def __init__(self, size: int, load: Callable[[Tile], bytes]) -> None:
        self.size = size
        self._load = load
        self._widths = {(t.level, t.n): t.width for t in tiles_of(size)}
        self._tiles: dict[tuple[int, int], bytes] = {}

    def tile(self, level: int, n: int) -> bytes:
        """The bytes of tile ``n`` at tile level ``level`` of this tree."""
        key = (level, n)
        if key not in self._tiles:
            width = self._widths.get(key)
            if width is None:
                raise TileError(f"the tree of {self.size} entries has no tile {level}/{n}")
            data = self._load(Tile(level, n, width))
            if len(data) != width * merkle.HASH_SIZE:
                raise TileError(f"{tile_path(Tile(level, n, width))} is not {width} hashes")
            self._tiles[key] = data
        return self._tiles[key]

    def hash_at(self, level: int, n: int) -> bytes:
        """The hash of the ``n``-th complete subtree of Merkle level ``level``."""
        above, rest = divmod(level, HEIGHT)
        first = n << rest
        data = self.tile(above, first // WIDTH)
        at = (first % WIDTH) * merkle.HASH_SIZE
        return tile_hash(data[at : at + (merkle.HASH_SIZE << rest)])

    def read(self, indices: Sequence[int]) -> list[bytes]:
        return [self.hash_at(*split_stored_index(i)) for i in indices]


def verify_tiles(hashes: TileHashes, root: bytes, fresh: Iterable[Tile] | None = None) -> None:
    """``TileError`` unless the tiles of ``hashes`` are the tree of that root: each full
    tile among ``fresh`` (default: all the tree's) hashes to its hash in the tile above,
    and the partial tiles, with those, fold to ``root``. (A full tile checked once stays
    checked: a mirror checks only the tiles it fetched, and the old root from them.)"""
    for tile in tiles_of(hashes.size) if fresh is None else fresh:
        if tile.level == ENTRIES or not tile.full:
            continue
        above = hashes.tile(tile.level + 1, tile.n // WIDTH)
        at = (tile.n % WIDTH) * merkle.HASH_SIZE
        if tile_hash(hashes.tile(tile.level, tile.n)) != above[at : at + merkle.HASH_SIZE]:
            raise TileError(f"{tile_path(tile)} is not the tile its parent tile hashes")
    if merkle.subtree_hash(0, hashes.size, hashes.read) != root:
        raise TileError(f"the tiles of the tree of {hashes.size} entries do not give its root")


def check_bundle(tile: Tile, bundle: bytes, leaves: bytes) -> list[bytes]:
    """A bundle's entries, ``TileError`` unless they are ``tile.width`` entries whose leaf
    hashes are ``leaves`` (the level-0 tile of the same index)."""
    entries = unframe(bundle)
    if len(entries) != tile.width:
        raise TileError(f"{tile_path(tile)} holds {len(entries)} entries, not {tile.width}")
    for i, data in enumerate(entries):
        if merkle.leaf(data) != leaves[i * merkle.HASH_SIZE : (i + 1) * merkle.HASH_SIZE]:
            raise TileError(f"entry {tile.n * WIDTH + i + 1} of {tile_path(tile)} is not its leaf")
    return entries
