"""``fairroll archive``, ``open-epoch`` and ``mirror``: an operator's work on a table's log."""

from __future__ import annotations

import argparse
import base64
import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fairroll.cli.operator import operator_store

if TYPE_CHECKING:
    from fairroll.audit.tiles import Tile, TileHashes
    from fairroll.cli.parsing import AddParser
    from fairroll.mirror_target import MirrorTarget

__all__ = ["add_archive", "add_mirror", "add_open_epoch"]


def add_archive(add_parser: AddParser) -> None:
    archive = add_parser(
        "archive",
        help="export a table's entries through a seq, verify them, then trim them from "
        "Redis behind a signed base (uses REDIS_URL and the signing key)",
    )
    archive.add_argument("table")
    archive.add_argument("--through", type=int, required=True, help="the last seq to archive")
    archive.add_argument(
        "--out", type=Path, required=True, help="the NDJSON file (its base goes beside it)"
    )
    archive.set_defaults(run=lambda a: _archive(a.table, a.through, a.out))


def add_open_epoch(add_parser: AddParser) -> None:
    epoch = add_parser(
        "open-epoch",
        help="after a loss no restore undoes: record in the table's log that the seqs up to "
        "--resume-after are lost, and go on after them (uses REDIS_URL and the signing key)",
    )
    epoch.add_argument("table")
    epoch.add_argument(
        "--resume-after",
        type=int,
        required=True,
        help="the highest seq acknowledged (the stopped servers' log lines name it)",
    )
    epoch.add_argument("--reason", required=True, help="what happened, for the players")
    epoch.set_defaults(run=lambda a: _open_epoch(a.table, a.resume_after, a.reason))


def add_mirror(add_parser: AddParser) -> None:
    mirror = add_parser(
        "mirror",
        help="copy a table's log (C2SP tlog-tiles) to a directory a static web server serves, "
        "or to an S3-compatible bucket",
        description="Copy TABLE's checkpoint, hash tiles and entry bundles from a fairroll "
        "server into DIR (a directory, or s3://bucket/prefix: endpoint and credentials from "
        "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, "
        "AWS_REGION), fetching only the tiles the mirror lacks. Each new checkpoint "
        "must be signed by a key the pinned root certifies, its tiles must give its root, "
        "and the tree the mirror held must be a prefix of it; only then are the new files "
        "written and the checkpoint replaced (last). Run it again to follow the table.",
    )
    mirror.add_argument("table")
    mirror.add_argument("dir", help="a directory, or s3://bucket/prefix")
    mirror.add_argument(
        "--server", default="http://127.0.0.1:8000", help="the fairroll server's base URL"
    )
    mirror.add_argument("--root", required=True, help="the pinned root key id to trust keys from")
    mirror.add_argument(
        "--keys", type=Path, help="GET /v1/keys as kept (default: fetched from the server)"
    )
    mirror.set_defaults(run=_mirror)


def _mirror(args: argparse.Namespace) -> int:
    """One incremental copy of a table's tiles; the module ``audit.tiles`` checks them."""
    import urllib.request  # noqa: PLC0415

    from fairroll.audit import merkle, note, tiles  # noqa: PLC0415
    from fairroll.audit.receipts import trusted_keys  # noqa: PLC0415
    from fairroll.mirror_target import open_target  # noqa: PLC0415

    server = args.server.rstrip("/")
    prefix = f"{server}/v1/tables/{args.table}/log"

    def fetch(url: str) -> bytes:
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - operator's URL
            data: bytes = answer.read()
            return data

    try:
        published = json.loads(args.keys.read_bytes() if args.keys else fetch(f"{server}/v1/keys"))
        keys = trusted_keys(published, args.root)
        fresh_note = fetch(f"{prefix}/checkpoint").decode()
        target = open_target(args.dir)
        kept = target.read("checkpoint")
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        size, root = _mirror_note(fresh_note, args.table, keys)
        old_size, old_root = (
            _mirror_note(kept.decode(), args.table, keys)
            if kept is not None
            else (0, merkle.EMPTY_ROOT)
        )
    except (note.NoteError, ValueError) as exc:
        print(f"FAIL: a checkpoint is not one of {args.table} under the pinned root: {exc}")
        return 1
    if size < old_size:
        print(f"FAIL: the server's tree ({size}) is smaller than the mirror's ({old_size})")
        return 1
    wanted = tiles.new_tiles(old_size, size)
    try:
        got = {t: fetch(f"{prefix}/{tiles.tile_path(t)}") for t in wanted}
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    by_key = {(t.level, t.n): data for t, data in got.items()}

    def load(tile: tiles.Tile) -> bytes:
        data = by_key.get((tile.level, tile.n)) or target.read(tiles.tile_path(tile))
        if data is None:
            raise tiles.TileError(f"the mirror lacks {tiles.tile_path(tile)}")
        return data

    hashes = tiles.TileHashes(size, load)
    bundles = [tiles.Tile(tiles.ENTRIES, t.n, t.width) for t in wanted if t.level == 0]
    try:
        tiles.verify_tiles(hashes, root, wanted)
        held = merkle.subtree_hash(0, old_size, hashes.read) if old_size else merkle.EMPTY_ROOT
        if held != old_root:
            raise tiles.TileError(f"the mirror's tree of {old_size} is not a prefix of it")
        got.update(_mirror_bundles(fetch, prefix, bundles, hashes))
    except (tiles.TileError, OSError) as exc:
        print(f"FAIL: the server's tiles of {args.table} at size {size}: {exc}")
        return 1
    files = [(tiles.tile_path(tile), data) for tile, data in got.items()]
    if not _write_mirror(target, [*files, ("checkpoint", fresh_note.encode())], args.dir):
        return 2
    print(f"mirrored {args.table}: size {old_size} -> {size}, {len(got)} new files in {args.dir}")
    return 0


def _write_mirror(target: MirrorTarget, files: list[tuple[str, bytes]], where: str) -> bool:
    """The new files written, the checkpoint last; False (said) when the target refuses."""
    try:
        target.write(files)
    except OSError as exc:
        print(f"error: writing the mirror {where}: {exc}", file=sys.stderr)
        return False
    return True


def _mirror_bundles(
    fetch: Callable[[str], bytes], prefix: str, bundles: Iterable[Tile], hashes: TileHashes
) -> dict[Tile, bytes]:
    """The entry bundles, each checked against its level-0 tile; one the server does not
    serve (its entries were archived, or one is too long for a bundle's 2-byte frame;
    their hash tiles still are) is left out."""
    import urllib.error  # noqa: PLC0415

    from fairroll.audit import tiles  # noqa: PLC0415

    got = {}
    for bundle in bundles:
        try:
            got[bundle] = fetch(f"{prefix}/{tiles.tile_path(bundle)}")
        except urllib.error.HTTPError as missing:
            if missing.code != 404:
                raise
            print(
                f"note: {tiles.tile_path(bundle)} is not served (archived, or an entry "
                "longer than a frame holds): left out"
            )
            continue
        tiles.check_bundle(bundle, got[bundle], hashes.tile(0, bundle.n))
    return got


def _mirror_note(text: str, table: str, keys: Mapping[str, str]) -> tuple[int, bytes]:
    """(size, root) of a checkpoint note of ``table`` signed by one of ``keys`` (key id ->
    base64 public key); ``note.NoteError`` else."""

    from fairroll.audit import note  # noqa: PLC0415
    from fairroll.audit.checkpoint import parse_body  # noqa: PLC0415

    origin = text.split("\n", 1)[0]
    name, _, named = origin.rpartition("/")
    if named != table:
        raise note.NoteError(f"its origin {origin!r} is not table {table}'s")
    verifiers = [note.SignerVerifier(name, base64.b64decode(k)) for k in keys.values()]
    size, root, _ = parse_body(note.open_note(text, verifiers).text)
    return size, root


def _open_epoch(table: str, resume_after: int, reason: str) -> int:
    import asyncio  # noqa: PLC0415

    opened = operator_store()
    if isinstance(opened, int):
        return opened
    store = opened

    async def run() -> int:
        try:
            entry = await store.open_epoch(table, resume_after, reason)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            await store.redis.aclose()
        print(
            f"{table}: epoch entry at seq {entry.seq} (seqs {entry.request['lost_after'] + 1}.."
            f"{resume_after} declared lost); restart the fairroll processes that stopped it"
        )
        return 0

    return asyncio.run(run())


def _archive(table: str, through: int, out: Path) -> int:
    """Export entries (base, through] to ``out``, verify them (chain, signatures, outcomes),
    then trim them from Redis behind a checkpoint signed for ``through``, written to
    ``out`` + ``.base.json``. Nothing is trimmed unless the file verified."""
    import asyncio  # noqa: PLC0415

    import msgspec  # noqa: PLC0415

    from fairroll.audit.verify import Trust, verify_entries  # noqa: PLC0415
    from fairroll.mechanics import replay_entry  # noqa: PLC0415

    opened = operator_store()
    if isinstance(opened, int):
        return opened
    store = opened

    async def run() -> int:
        try:
            base = await store.base(table)
            start = base.size if base else 0
            served = Trust.rooted(await store.public_keys(), store.root_key_id)
            lines = []
            after = start
            while page := await store.raw_page(table, after=after, until=through):
                lines += [raw for _, raw in page]
                after = page[-1][0]
            report = verify_entries(
                lines,
                dataclasses.replace(
                    served, table=table, base=(base.size, base.head_hash) if base else None
                ),
                replay=replay_entry,
            )
            if not report.ok or report.last_seq != through:
                print(f"FAIL: not archived: {report.reason or 'the log ends before that seq'}")
                return 1
            await asyncio.to_thread(out.write_bytes, b"".join(line + b"\n" for line in lines))
            new_base = await store.archive(table, through)
        finally:
            await store.redis.aclose()
        base_file = out.with_name(out.name + ".base.json")
        base_file.write_bytes(msgspec.json.encode(new_base))
        print(f"archived {table} seq {start + 1}..{through} to {out}; base in {base_file}")
        return 0

    return asyncio.run(run())
