"""``fairroll verify``: an export, one entry's receipt, an equivocation or a cosigned
checkpoint, checked offline; its verdict is its exit status."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairroll.cli.kept import (
    base_of,
    kept_checkpoints,
    published_keys,
    receipt_anchors,
    revealed_seeds,
)
from fairroll.cli.verdict import Reopener, answer

if TYPE_CHECKING:
    from fairroll.cli.parsing import AddParser

__all__ = ["add_verify"]


def add_verify(add_parser: AddParser) -> None:
    verify = add_parser(
        "verify", help="verify a table's log offline: an NDJSON export, or its tiles (--tiles)"
    )
    _what_to_verify(verify)
    _how_to_verify(verify)
    _what_was_kept(verify)
    verify.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="say what holds even when no signature could be checked (no --keys); without "
        "it such a run is NOT VERIFIED and exits 4",
    )
    verify.set_defaults(run=_run_verify)


def _what_to_verify(verify: argparse.ArgumentParser) -> None:
    """What is checked: an export, one entry, a cosigned checkpoint or two notes, and
    under which keys."""
    verify.add_argument(
        "--root",
        help="the pinned root key id (its fingerprint, published out of band): keys are "
        "then trusted only as the log publishes them under that root",
    )
    verify.add_argument(
        "file",
        type=Path,
        nargs="?",
        help="export of one table (NDJSON), or - for stdin (not with --entry or --equivocation)",
    )
    verify.add_argument(
        "--tiles",
        metavar="URL",
        help="read the log from its tiles (C2SP tlog-tiles) instead of an export: the "
        "server's https://HOST/v1/tables/TABLE/log, a mirror's URL on any static host, "
        "or a mirror's directory; its checkpoint must be signed under --root (with --keys) "
        "and is kept as a --checkpoint",
    )
    verify.add_argument(
        "--entry",
        type=Path,
        help="one entry (JSON of GET .../entries/{seq}): check its --receipt alone, with "
        "--keys and --root (the receipt's checkpoint and inclusion proof)",
    )
    verify.add_argument(
        "--cosigned",
        type=Path,
        help="a checkpoint (note or JSON): is it the log's, cosigned by --quorum of the "
        "--witness keys? (with --keys, --root)",
    )
    verify.add_argument(
        "--witness",
        action="append",
        default=[],
        help="a witness's verifier key (repeatable), for --cosigned",
    )
    verify.add_argument(
        "--quorum", type=int, default=1, help="cosignatures --cosigned needs (default 1)"
    )
    verify.add_argument(
        "--equivocation",
        type=Path,
        nargs=2,
        metavar=("A", "B"),
        help="two receipts, roll answers or checkpoints of one table (JSON, or the notes): "
        "exit 3 and print both notes if they sign two trees of one size (with --keys, --root)",
    )
    verify.add_argument(
        "--keys",
        type=Path,
        help="public keys as served by GET /v1/keys (JSON); without it signatures go unchecked",
    )


def _how_to_verify(verify: argparse.ArgumentParser) -> None:
    """How: with or without replaying outcomes, as JSON, in how many processes."""
    verify.add_argument(
        "--no-replay", action="store_true", help="skip re-resolving each outcome from its dice"
    )
    verify.add_argument(
        "--json",
        action="store_true",
        help="print the verdict and the auditor's report (counts, keys, face counts and "
        "their goodness-of-fit tests, the checkpoint to keep) as one JSON object",
    )
    verify.add_argument(
        "--workers",
        type=int,
        help="processes for the checks of one entry alone (signatures, dice, replay); "
        "default one per core, 1 for none",
    )


def _what_was_kept(verify: argparse.ArgumentParser) -> None:
    """What a player kept earlier, that the export must still hold."""
    verify.add_argument(
        "--checkpoint",
        type=Path,
        action="append",
        default=[],
        help="a checkpoint kept earlier (JSON of GET .../checkpoint, or its signed note as "
        "text/plain); the export must still hold its head and its Merkle root (repeatable)",
    )
    verify.add_argument(
        "--since",
        type=Path,
        action="append",
        default=[],
        help="the last checkpoint you verified (as --checkpoint): the export must be "
        "consistent with it, and the checkpoint to keep next is printed",
    )
    verify.add_argument(
        "--reveal",
        type=Path,
        action="append",
        default=[],
        help="a revealed seed session (JSON of POST .../seeds/{id}/reveal) (repeatable)",
    )
    verify.add_argument(
        "--base",
        type=Path,
        help="an archived log's base (JSON of GET .../base): the export starts after it",
    )
    verify.add_argument(
        "--receipt",
        type=Path,
        action="append",
        default=[],
        help="a roll's receipt kept earlier (JSON with seq and entry_hash) (repeatable)",
    )


def _run_verify(args: argparse.Namespace) -> int:
    """``verify``, whose verdict is its exit status even when its reader stops early
    (``fairroll verify export.ndjson | head``: ``_pipe_closed_quietly``)."""
    with _pipe_closed_quietly():
        return _verify_command(args)


class _StopsOnClosedPipe:
    """Standard output that, once its reader has gone, drops what is written instead of
    raising ``BrokenPipeError`` in the middle of a verification."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.closed_pipe = False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                self.real.write(text)
            except BrokenPipeError:
                self.closed_pipe = True
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.real.flush()
            except BrokenPipeError:
                self.closed_pipe = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@contextmanager
def _pipe_closed_quietly() -> Iterator[None]:
    """A reader that closes the pipe early ends the output, not the command: no
    traceback, and the exit status stays the verdict's. At the end, a closed standard
    output is pointed at /dev/null so the interpreter's last flush is silent too."""
    real = sys.stdout
    guard = _StopsOnClosedPipe(real)
    sys.stdout = guard
    try:
        yield
        guard.flush()
    finally:
        sys.stdout = real
        if guard.closed_pipe:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, real.fileno())
            os.close(null)


def _verify_command(args: argparse.Namespace) -> int:
    from fairroll.cli import evidence  # noqa: PLC0415 - brings fairroll.audit

    alone = args.entry is not None or args.equivocation is not None or args.cosigned is not None
    if alone and (args.keys is None or not args.root):
        print("error: --entry and --equivocation need --keys and --root", file=sys.stderr)
        return 2
    if args.cosigned is not None:
        return evidence.check_quorum(args.cosigned, args.keys, args.root, args.witness, args.quorum)
    if args.equivocation is not None:
        first, second = args.equivocation
        return evidence.check_equivocation(first, second, args.keys, args.root)
    if args.entry is not None:
        if len(args.receipt) != 1:
            print("error: --entry checks exactly one --receipt", file=sys.stderr)
            return 2
        return evidence.check_receipt(args.entry, args.receipt[0], args.keys, args.root)
    if args.tiles is not None:
        return _verify_tiles(args)
    if args.file is None:
        print("error: give an export to verify (or --entry, or --equivocation)", file=sys.stderr)
        return 2
    return _verify(
        args.file,
        args.keys,
        replay=not args.no_replay,
        checkpoints=[*args.checkpoint, *args.since],
        receipts=args.receipt,
        reveals=args.reveal,
        base_file=args.base,
        root=args.root,
        workers=args.workers,
        allow_unsigned=args.allow_unsigned,
        as_json=args.json,
    )


def _verify_tiles(args: argparse.Namespace) -> int:
    """``verify --tiles``: the log read from its tiles (``audit.verify.tiles_source``),
    then verified as its export is, with the checkpoint read kept as a ``--checkpoint``."""
    import json  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from fairroll.audit.receipts import trusted_keys  # noqa: PLC0415
    from fairroll.audit.verify import tiles_source  # noqa: PLC0415

    try:
        published = json.loads(args.keys.read_bytes()) if args.keys else None
        keys = trusted_keys(published, args.root) if published and args.root else None
        log = tiles_source.read_log(tiles_source.loader(args.tiles), keys)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a tile, a bundle or the checkpoint is not the log's
        print(f"FAIL: the tiles at {args.tiles}: {exc}")
        return 1
    with tempfile.TemporaryDirectory(prefix="fairroll-tiles-") as folder:
        args.file = Path(folder) / "tiles.ndjson"
        args.file.write_bytes(log.ndjson())
        if args.keys is not None:  # a signed note is kept only where it can be opened
            (Path(folder) / "checkpoint").write_text(log.note, encoding="utf-8")
            args.checkpoint.append(Path(folder) / "checkpoint")
        args.tiles = None
        return _verify_command(args)


def _verify(
    file: Path,
    keys_file: Path | None,
    *,
    replay: bool,
    checkpoints: Sequence[Path] = (),
    receipts: Sequence[Path] = (),
    reveals: Sequence[Path] = (),
    base_file: Path | None = None,
    root: str | None = None,
    workers: int | None = None,
    allow_unsigned: bool = False,
    as_json: bool = False,
) -> int:
    """Verify the export ``file`` under what the player kept; print the verdict and
    answer its exit status (``verdict.answer``)."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit.parallel import verify_everywhere  # noqa: PLC0415
    from fairroll.mechanics import RevisionTally  # noqa: PLC0415

    published = published_keys(keys_file, root)
    if isinstance(published, int):
        return published
    keys = published.keys
    read = kept_checkpoints(checkpoints, keys)
    if isinstance(read, int):
        return read
    anchors, roots, covering, evidence = read
    kept_receipts = receipt_anchors(receipts)
    if isinstance(kept_receipts, int):
        return kept_receipts
    anchors += kept_receipts
    revealed = revealed_seeds(reveals)
    if isinstance(revealed, int):
        return revealed
    based = base_of(base_file, keys)
    if isinstance(based, int):
        return based
    start, frontier = based
    trust = dataclasses.replace(
        published,
        anchors=anchors,
        roots=roots,
        reveals=revealed,
        base=start,
        base_frontier=frontier,
        root=root,
        covered_by=covering,
    )
    with _tally_place(replay, workers) as into:
        # Counts, by mechanic, the entries that replay only under an earlier revision.
        tally = RevisionTally(into) if replay else None
        report = verify_everywhere(_reopener(file), trust, replay=tally, workers=workers)
        if tally is not None:
            report = msgspec.structs.replace(report, earlier_revisions=tally.counts())
    checked = (replay, len(anchors), [size for size, _ in roots])
    status = answer(
        _reopener(file),
        report,
        checked,
        rooted=root is not None,
        allow_unsigned=allow_unsigned,
        as_json=as_json,
    )
    if evidence and not as_json:
        print("the two signed notes of one size, a proof of equivocation anyone can check:")
        print("\n".join(f"--- note ---\n{text}" for text in evidence))
    return status


@contextmanager
def _tally_place(replay: bool, workers: int | None) -> Iterator[MutableMapping[int, str] | None]:
    """Where a ``RevisionTally`` keeps its count: its own dict (None) in one process, a
    dict shared with the worker processes that replay entries when there are any."""
    import multiprocessing  # noqa: PLC0415

    if not replay or ((os.cpu_count() or 1) if workers is None else workers) <= 1:
        yield None
        return

    with multiprocessing.get_context("fork").Manager() as manager:
        yield manager.dict()


def _reopener(file: Path) -> Reopener:
    """Opens the export again each time (a failure is read twice); stdin is read once."""
    if str(file) == "-":
        kept = sys.stdin.buffer.read().splitlines()
        return lambda: nullcontext(kept)

    @contextmanager
    def lines() -> Iterator[Iterable[bytes]]:
        with file.open("rb") as handle:
            yield handle

    return lines
