"""The auditor's report ``fairroll verify`` prints reads each line of the export a second
time, decoded to the fields the report reads only: it must be the report of the lines
decoded whole, on the conformance log (every kind of entry it holds) and on a log whose
entries carry dice of both kinds and fields the report does not read."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import msgspec

from fairroll.audit.report import audit_report
from fairroll.cli.verdict import _audit

ROOT = Path(__file__).resolve().parents[1]


def reopener(lines: list[bytes]) -> contextlib.AbstractContextManager[list[bytes]]:
    @contextlib.contextmanager
    def opened() -> Iterator[list[bytes]]:
        yield lines

    return opened()


def test_the_report_of_fields_read_is_the_report_of_whole_lines() -> None:
    lines = (ROOT / "docs" / "vectors" / "log.ndjson").read_bytes().splitlines(keepends=True)
    whole = audit_report(msgspec.json.decode(line) for line in lines if line.strip())
    assert _audit(lambda: reopener(lines)) == whole
    assert whole.entries == len([line for line in lines if line.strip()])


def test_dice_of_both_kinds_and_unread_fields_count_alike() -> None:
    entries = [
        {"seq": 1, "table": "t", "mechanic": "dice", "source": "server", "key_id": "k1",
         "time": "2026-12-03T00:00:00Z", "dice": [{"sides": 6, "face": 3, "x": 1}] * 4,
         "request": {"deep": [1, 2, {"a": None}]}, "outcome": {"total": 12}},
        {"seq": 2, "table": "t", "mechanic": "dice", "source": "supplied", "key_id": "k2",
         "time": "2026-12-02T00:00:00Z", "dice": [{"sides": 20, "face": 20}]},
        {"seq": 3, "table": "t", "mechanic": "note", "source": "statement", "key_id": "k2"},
        {"seq": 4, "mechanic": None, "source": None, "dice": None, "time": 5},
    ]  # fmt: skip
    lines = [json.dumps(entry).encode() + b"\n" for entry in entries] + [b"\n"]
    assert _audit(lambda: reopener(lines)) == audit_report(entries)
