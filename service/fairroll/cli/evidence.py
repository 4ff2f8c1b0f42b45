"""``fairroll verify`` without an export: one receipt checked alone, and two notes
compared for equivocation (``audit.receipts``), from files a player kept."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from fairroll.audit.receipts import ReceiptError, equivocation, trusted_keys, verify_receipt

__all__ = ["check_equivocation", "check_quorum", "check_receipt"]


def check_receipt(entry_file: Path, receipt_file: Path, keys_file: Path, root: str) -> int:
    """0 when the receipt holds for the entry under a key the root certifies, else 1."""
    keys = _trusted(keys_file, root)
    entry, kept = _json(entry_file), _json(receipt_file)
    if keys is None or entry is None or kept is None:
        return 2
    receipt = kept.get("receipt", kept)  # a whole roll answer, or its receipt
    try:
        size, root_hash = verify_receipt(entry, receipt, keys, log_name=_log_name(receipt))
    except ReceiptError as exc:
        print(f"FAIL at seq {entry.get('seq')}: {exc}")
        return 1
    print(
        f"OK: entry {entry['seq']} of table {entry['table']} is in the tree of {size} "
        f"entries its checkpoint signs (root {root_hash.hex()}), under key "
        f"{receipt['key_id']} certified by the pinned root {root}"
    )
    return 0


def check_equivocation(first: Path, second: Path, keys_file: Path, root: str) -> int:
    """3 when the two notes prove equivocation, 0 when they agree, 1 or 2 otherwise."""
    keys = _trusted(keys_file, root)
    notes = [_note(path) for path in (first, second)]
    if keys is None or notes[0] is None or notes[1] is None:
        return 2
    name = notes[0].split("\n", 1)[0].rsplit("/", 1)[0]
    try:
        found = equivocation(notes[0], notes[1], keys, log_name=name)
    except ReceiptError as exc:
        print(f"FAIL: {exc}")
        return 1
    print(found.said)
    if found.proven:
        print(f"--- note 1 ({first})\n{notes[0]}--- note 2 ({second})\n{notes[1]}", end="")
        return 3
    return 0


def _trusted(keys_file: Path, root: str) -> dict[str, str] | None:
    served = _json(keys_file)
    if served is None:
        return None
    keys = trusted_keys(served, root)
    if not keys:
        print(f"error: {keys_file} holds no key certified by the root {root}", file=sys.stderr)
        return None
    return keys


def _note(path: Path) -> str | None:
    """A signed note from a receipt, a roll answer, a checkpoint (JSON) or the note."""
    text = path.read_text()
    if not text.lstrip().startswith("{"):
        return text
    held = _json(path)
    if held is None:
        return None
    for found in (
        held.get("receipt", {}).get("checkpoint"),
        held.get("checkpoint"),
        held.get("text"),
    ):
        if isinstance(found, str):
            return found
    print(f"error: {path} holds no signed note", file=sys.stderr)
    return None


def _log_name(receipt: dict[str, Any]) -> str:
    note = receipt.get("checkpoint")
    first = note.split("\n", 1)[0] if isinstance(note, str) else ""
    return first.rsplit("/", 1)[0] if "/" in first else "fairroll"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return None


def check_quorum(
    note_file: Path, keys_file: Path, root: str, witnesses: list[str], quorum: int
) -> int:
    """0 when the checkpoint note opens under a key the root certifies and carries at
    least ``quorum`` valid cosignatures of the ``witnesses`` (verifier keys), else 1."""
    from fairroll.audit.checkpoint import NoteError, open_note  # noqa: PLC0415
    from fairroll.audit.cosignature import (  # noqa: PLC0415
        CosignatureError,
        ForgedCosignatureError,
        open_cosignature,
        parse_verifier_key,
    )

    keys = _trusted(keys_file, root)
    note = _note(note_file)
    if keys is None or note is None:
        return 2
    name = note.split("\n", 1)[0].rsplit("/", 1)[0]
    opened = None
    for key in keys.values():
        with contextlib.suppress(NoteError):
            opened = open_note(note, name, key)
            break
    if opened is None:
        print("FAIL: the checkpoint is not signed by a key the pinned root certifies")
        return 1
    cosigned: list[str] = []
    distinct: dict[str, str] = {}  # one witness counts once, however often it is named
    for vkey in witnesses:
        try:
            distinct.setdefault(parse_verifier_key(vkey).vkey, vkey)
        except CosignatureError as exc:
            print(f"error: --witness {vkey}: {exc}", file=sys.stderr)
            return 2
    for vkey in distinct.values():
        try:
            open_cosignature(note, vkey)
        except ForgedCosignatureError as exc:  # a failing line of a known witness
            print(f"FAIL: {exc}: the note is rejected")
            return 1
        except CosignatureError:
            continue
        cosigned.append(vkey.split("+", 1)[0])
    witnesses = list(distinct.values())
    if len(cosigned) < quorum:
        print(
            f"FAIL: {len(cosigned)} of the {len(witnesses)} witnesses cosigned this checkpoint "
            f"({', '.join(cosigned) or 'none'}); {quorum} are required"
        )
        return 1
    print(
        f"OK: the checkpoint of {opened[0]} entries is signed by the log and cosigned by "
        f"{len(cosigned)} of {len(witnesses)} witnesses: {', '.join(cosigned)}"
    )
    return 0
