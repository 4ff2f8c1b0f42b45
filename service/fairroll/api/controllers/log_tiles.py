"""A table's log as C2SP tlog-tiles (``audit.tiles``): its checkpoint, hash tiles and
entry bundles under ``/v1/tables/{table}/log``, so the transparency world's readers
(Go's ``sumdb/tlog``, tlog-tiles clients) read it, and ``fairroll mirror`` copies it to
files any static web server serves.

Every tile is read from the hashes the table's tree already keeps, and a bundle from
the stored entries: the roll path does nothing for tiles. A full tile never changes
(``Cache-Control: public, max-age=31536000, immutable``); a partial one is named by its
width, so it never changes either, but it is kept for a short while only (a reader
asks for it after a checkpoint of that size, and the full tile soon replaces it).
Entries an archive trimmed are no longer served in bundles (404); the tree is kept
whole, so every hash tile still is.
"""

from __future__ import annotations

import gzip
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.datastructures import ResponseHeader
from litestar.exceptions import NotFoundException
from litestar.params import Parameter

from fairroll.api.caching import IMMUTABLE, NOT_MODIFIED, cached
from fairroll.api.controllers.checkpoints import cosignature_lines
from fairroll.api.controllers.params import TablePath
from fairroll.api.problems import problem_responses
from fairroll.audit import AuditStore, merkle, tiles
from fairroll.audit.entry import jcs
from fairroll.audit.tiles import Tile, TileError

__all__ = ["LogTilesController", "served_note"]

#: How long a partial tile or bundle may be kept by a cache.
PARTIAL = "public, max-age=60"
OCTETS = "application/octet-stream"
#: ``text/plain``: the framework adds ``; charset=utf-8`` once (the spec's type).
NOTE_TYPE = "text/plain"

Level = Annotated[
    int,
    Parameter(ge=0, le=tiles.MAX_LEVEL, description="The tile's level (0: leaf hashes)."),
]
TileIndex = Annotated[
    str,
    Parameter(
        pattern=r"^/?(x[0-9]{3}/)*[0-9]{3}(\.p/[1-9][0-9]{0,2})?$",
        max_length=40,
        description="The tile's index in 3-digit groups, all but the last prefixed with "
        "'x' (1234067 is x001/x234/067), then '.p/<width>' (1 to 255) for a partial tile.",
    ),
]
_TILE_HEADERS = [
    ResponseHeader(
        name="Cache-Control",
        description=f"`{IMMUTABLE}` for a full tile, `{PARTIAL}` for a partial one.",
        documentation_only=True,
    ),
]


async def served_note(store: AuditStore, table: str) -> str:
    """The table's checkpoint note, signed now, with the cosignatures kept for that very
    tree as extra signature lines."""
    checkpoint = await store.checkpoint(table)
    lines = [
        line
        for cosigned in await store.cosignatures.listed(table)
        if cosigned.size == checkpoint.size and cosigned.root_hash == checkpoint.root_hash
        for line in cosignature_lines(cosigned.note, checkpoint.text)
    ]
    return checkpoint.text + "".join(f"{line}\n" for line in lines)


class LogTilesController(Controller):
    path = "/v1/tables/{table:str}/log"
    tags = ("audit",)

    @get(
        "/checkpoint",
        operation_id="getTableLogCheckpoint",
        summary="The table's checkpoint as C2SP tlog-tiles serves it: the signed note",
        description="The note of `GET .../checkpoint` (with the cosignatures of that "
        "tree), as `text/plain; charset=utf-8`, revalidated on each use (`no-cache`).",
        media_type=NOTE_TYPE,
        responses={**problem_responses(400, 422, 503), **NOT_MODIFIED},
    )
    async def checkpoint(
        self, request: Request[Any, Any, Any], table: TablePath, store: AuditStore
    ) -> Response[bytes]:
        return cached(request, (await served_note(store, table)).encode(), NOTE_TYPE)

    @get(
        "/tile/entries/{index:path}",
        operation_id="getTableEntryBundle",
        summary="An entry bundle (C2SP tlog-tiles): up to 256 exported entries, each "
        "framed by its length as a big-endian uint16",
        description="Entry i of bundle N is seq N*256+i+1, the exported line of the entry "
        "(its JCS bytes: SHA-256(0x00 || bytes) is its leaf hash in level-0 tile N); a "
        "seq an epoch declared lost is framed as 'fairroll/lost/v1:<seq>'. 404 for a "
        "bundle beyond the table's size or holding entries an archive trimmed. Sent with "
        "`Content-Encoding: gzip` to a client that accepts it.",
        media_type=OCTETS,
        responses=problem_responses(400, 404, 422, 503),
        response_headers=_TILE_HEADERS,
    )
    async def entry_bundle(
        self, request: Request[Any, Any, Any], table: TablePath, index: TileIndex, store: AuditStore
    ) -> Response[bytes]:
        tile = _parse(f"tile/entries/{index.lstrip('/')}")
        await _check_in_tree(store, table, tile)
        seqs = tiles.bundle_seqs(tile)
        leaves = await store.read_hashes(table, tiles.hash_indices(Tile(0, tile.n, tile.width)))
        stored = dict(await store.raw_page(table, after=seqs[0] - 1, until=seqs[-1]))
        entries = []
        for seq, leaf in zip(seqs, leaves, strict=True):
            data = stored.get(seq)
            if data is None:
                if leaf != merkle.lost_leaf(seq):
                    raise NotFoundException(f"entry {seq} of table {table!r} was archived")
                data = merkle.LOST_PREFIX + str(seq).encode()
            elif merkle.leaf(data) != leaf:  # an entry stored before entries were JCS
                data = jcs(msgspec.json.decode(data))
            entries.append(data)
        try:
            body = tiles.frame(entries)
        except TileError as exc:  # an entry over 65535 bytes: never a truncated one
            # C2SP frames an entry by a 2-byte length, so this bundle has no tile form
            # (a long battle's entry outgrows it); its hash tiles stand, and the entries
            # are read one by one or from the export.
            raise NotFoundException(
                f"table {table!r}: {exc}; this bundle has no tile form (C2SP frames an "
                f"entry by a 2-byte length): read its entries from "
                f"/v1/tables/{table}/export?from_seq={seqs[0]}&to_seq={seqs[-1]}"
            ) from None
        headers = {"Cache-Control": IMMUTABLE if tile.full else PARTIAL, "Vary": "Accept-Encoding"}
        if "gzip" in request.headers.get("accept-encoding", ""):
            body = gzip.compress(body, mtime=0)
            headers["Content-Encoding"] = "gzip"
        return Response(body, media_type=OCTETS, headers=headers)

    @get(
        "/tile/{level:int}/{index:path}",
        operation_id="getTableHashTile",
        summary="A hash tile (C2SP tlog-tiles, height 8): up to 256 hashes of one level "
        "of the table's Merkle tree",
        description="Hash i of tile N at level L is the Merkle tree hash of entries "
        "(N*256+i)*256^L + 1 to (N*256+i+1)*256^L (seqs), 32 bytes each; a full tile "
        "is 256 hashes, a partial one '.p/<W>' its W. 404 for a tile the table's tree "
        "does not hold yet.",
        media_type=OCTETS,
        responses=problem_responses(400, 404, 422, 503),
        response_headers=_TILE_HEADERS,
    )
    async def hash_tile(
        self, table: TablePath, level: Level, index: TileIndex, store: AuditStore
    ) -> Response[bytes]:
        tile = _parse(f"tile/{level}/{index.lstrip('/')}")
        await _check_in_tree(store, table, tile)
        body = b"".join(await store.read_hashes(table, tiles.hash_indices(tile)))
        cache = IMMUTABLE if tile.full else PARTIAL
        return Response(body, media_type=OCTETS, headers={"Cache-Control": cache})


def _parse(path: str) -> Tile:
    try:
        return tiles.parse_tile_path(path)
    except TileError as exc:
        raise NotFoundException(str(exc)) from None


async def _check_in_tree(store: AuditStore, table: str, tile: Tile) -> None:
    head, _ = await store.read_head(table)
    try:
        tiles.check_in_tree(tile, head.seq)
    except TileError as exc:
        raise NotFoundException(str(exc)) from None
