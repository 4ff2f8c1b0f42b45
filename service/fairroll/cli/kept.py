"""What ``fairroll verify`` reads that a player kept: checkpoints (JSON or signed notes)
and an archive's base, each checked under the trusted keys; an exit status else."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairroll.audit import Checkpoint, Trust

__all__ = [
    "base_of",
    "checkpoint_of",
    "kept_checkpoints",
    "published_keys",
    "receipt_anchors",
    "revealed_seeds",
]


def checkpoint_of(
    path: Path, keys: Mapping[str, str] | None, what: str, *, unsigned_ok: bool = False
) -> Checkpoint | int | None:
    """A kept checkpoint (or an archive base), as JSON or as its signed note, read and,
    given keys, its signature checked; or an exit status, with the reason printed."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit import Checkpoint, verify_checkpoint  # noqa: PLC0415

    try:
        data = path.read_bytes()
    except OSError as exc:
        print(
            f"error: {path}: {exc.strerror or exc} ({what} you kept earlier; the first time, "
            "leave it out and keep the checkpoint this run verified)",
            file=sys.stderr,
        )
        return 2
    if not data.lstrip().startswith(b"{"):
        opened = _note_checkpoint(path, data, keys, what, quiet=unsigned_ok)
        if opened == 1 and unsigned_ok:
            _ignored(path, what)
            return None
        return opened
    try:
        checkpoint = msgspec.json.decode(data, type=Checkpoint)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        print(f"error: {path} is not {what}: {exc}", file=sys.stderr)
        return 2
    if keys is not None and not verify_checkpoint(checkpoint, keys.get(checkpoint.key_id, "")):
        if unsigned_ok:
            _ignored(path, what)
            return None
        print(f"FAIL: {what} {path} is not signed by a key the pinned root certifies")
        return 1
    return checkpoint


def _ignored(path: Path, what: str) -> None:
    """A kept checkpoint no trusted key signed proves nothing: it is left out (and so
    stands in for no signature), said on stderr, and the log is checked without it."""
    print(
        f"warning: {what} {path} is not signed by a key the pinned root certifies: ignored",
        file=sys.stderr,
    )


def _note_checkpoint(
    path: Path, data: bytes, keys: Mapping[str, str] | None, what: str, *, quiet: bool = False
) -> Checkpoint | int:
    """A checkpoint kept as its signed note (``Accept: text/plain``): it needs --keys."""

    from fairroll.audit import note  # noqa: PLC0415
    from fairroll.audit.checkpoint import Checkpoint, NoteError, parse_body  # noqa: PLC0415

    text = data.decode("utf-8", "replace")
    origin = text.split("\n", 1)[0]
    name = origin.rsplit("/", 1)[0]
    if keys is None:
        print(f"error: {path} is a signed note: pass --keys to check it", file=sys.stderr)
        return 2
    # Every trusted key at once (note.open_note): a failing line of any of them rejects
    # the note, whatever good line stands beside it.
    verifiers = {
        note.SignerVerifier(name, base64.b64decode(public_key)): key_id
        for key_id, public_key in keys.items()
    }
    try:
        opened = note.open_note(text, verifiers)
        size, root, head_hash = parse_body(opened.text)
    except (NoteError, note.NoteError):
        opened = None
    if opened is not None:
        signer = next(v for v in verifiers if v.key_hash == opened.sigs[0].key_hash)
        return Checkpoint(
            table=origin.rsplit("/", 1)[-1],
            origin=origin,
            size=size,
            root_hash=base64.b64encode(root).decode(),
            head_hash=head_hash,
            key_id=verifiers[signer],
            key_name=name,
            signature="",
            text=text,
        )
    if not quiet:
        print(f"FAIL: {what} {path} is not a checkpoint note signed under the pinned root")
    return 1


def kept_checkpoints(
    paths: Sequence[Path], keys: Mapping[str, str] | None
) -> tuple[list[tuple[int, str]], list[tuple[int, bytes]], Checkpoint | None, list[str]] | int:
    """The kept checkpoints' heads and roots by size, the largest (it may stand in for the
    signatures it covers), and the notes of any two of one size with two roots (the
    verifier fails them as an equivocation; both notes are its proof); or an exit status."""

    anchors: list[tuple[int, str]] = []
    roots: list[tuple[int, bytes]] = []
    covering: Checkpoint | None = None
    kept: dict[int, Checkpoint] = {}
    evidence: list[str] = []
    for path in paths:
        checkpoint = checkpoint_of(path, keys, "a checkpoint", unsigned_ok=True)
        if isinstance(checkpoint, int):
            return checkpoint
        if checkpoint is None:
            continue
        other = kept.setdefault(checkpoint.size, checkpoint)
        if other.root_hash != checkpoint.root_hash:
            evidence += [other.text, checkpoint.text]
        if checkpoint.size:
            anchors.append((checkpoint.size, checkpoint.head_hash))
            roots.append((checkpoint.size, base64.b64decode(checkpoint.root_hash)))
            if covering is None or checkpoint.size > covering.size:
                covering = checkpoint
    return anchors, roots, covering, evidence


def published_keys(keys_file: Path | None, root: str | None) -> Trust | int:
    """The keys of ``keys_file`` (GET /v1/keys), trusted once: only those the pinned
    ``root`` certified when there is one; no keys at all without a file; or exit 2."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit import PublicKey, Trust  # noqa: PLC0415

    if keys_file is None:
        return Trust(keys=None)
    try:
        served = json.loads(keys_file.read_text())
        listed = msgspec.convert(served["keys"], list[PublicKey])
    except (ValueError, KeyError, TypeError, msgspec.ValidationError) as exc:
        print(f"error: {keys_file} is not the JSON of GET /v1/keys: {exc}", file=sys.stderr)
        return 2
    return Trust.rooted(listed, root) if root else Trust.published(listed)


def receipt_anchors(paths: Sequence[Path]) -> list[tuple[int, str]] | int:
    """(seq, entry hash) of each kept receipt, which the export must hold; or exit 2."""
    anchors = []
    for path in paths:
        try:
            receipt = json.loads(path.read_text())
            anchors.append((int(receipt["seq"]), str(receipt["entry_hash"])))
        except (ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a receipt: {exc}", file=sys.stderr)
            return 2
    return anchors


def revealed_seeds(paths: Sequence[Path]) -> dict[str, str] | int:
    """The server seed of each revealed seed session, by its id; or exit 2."""
    revealed: dict[str, str] = {}
    for path in paths:
        try:
            session = json.loads(path.read_text())
            revealed[str(session["seed_id"])] = str(session["server_seed"])
        except (ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a revealed seed session: {exc}", file=sys.stderr)
            return 2
    return revealed


def base_of(
    path: Path | None, keys: Mapping[str, str] | None
) -> tuple[tuple[int, str] | None, list[bytes] | None] | int:
    """Where an archived log's export starts (the base's size and head) and the Merkle
    frontier it carries; (None, None) without a base; or an exit status."""
    if path is None:
        return None, None
    base = checkpoint_of(path, keys, "an archive base (GET .../base)")
    if base is None or isinstance(base, int):
        return 1 if base is None else base
    frontier = [base64.b64decode(h) for h in base.frontier or []] if base.frontier else None
    return (base.size, base.head_hash), frontier
