"""The sealed-roll vectors (docs/vectors/cases, class "sealed rolls") on the Python side
beyond the conformance verdict: the report lists what row 28 says (never revealed,
revealed, revealed before the part read), a resumed verification carries the open sealed
rolls, and the stdlib script's one-entry mode checks a sealed roll against its opening
(the commitment and the dice) with the standard library alone."""

from __future__ import annotations

import base64
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from fairroll.audit import Trust, verify_entries
from fairroll.audit.signing import PublicKey
from fairroll.audit.verify import verify_run
from fairroll.mechanics import replay_entry

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "docs" / "vectors"
INDEX = json.loads((VECTORS / "cases" / "index.json").read_text())
CASES = {c["name"]: c for c in INDEX["cases"] if c["class"] == "sealed rolls"}


def _lines(name: str) -> list[str]:
    return (VECTORS / CASES[name]["inputs"]["log"]).read_text().splitlines()


def _trust(name: str) -> Trust:
    """The case's trust, as the conformance runner builds it (the served keys, the pinned
    root, an archive base with its frontier)."""
    served = json.loads((VECTORS / "keys.json").read_text())
    trust = Trust.published(msgspec.convert(served["keys"], list[PublicKey]))
    base, frontier = None, None
    if "base" in CASES[name]["inputs"]:
        kept = json.loads((VECTORS / CASES[name]["inputs"]["base"]).read_text())
        base = (kept["size"], kept["head_hash"])
        frontier = [base64.b64decode(h) for h in kept["frontier"]]
    return dataclasses.replace(trust, root=INDEX["root"], base=base, base_frontier=frontier)


def test_every_case_of_the_class_is_there() -> None:
    assert len(CASES) >= 15
    assert {c["expect"]["ok"] for c in CASES.values()} == {True, False}


def test_revealed_rolls_are_counted_and_none_listed() -> None:
    report = verify_entries(_lines("sealed-rolls-revealed"), _trust("sealed-rolls-revealed"))
    assert report.ok and report.sealed_revealed == 3 and report.sealed_unrevealed == []


def test_rolls_never_revealed_are_listed_not_bad() -> None:
    name = "sealed-roll-never-revealed"
    report = verify_entries(_lines(name), _trust(name), replay=replay_entry)
    assert report.ok
    assert report.sealed_unrevealed == [3, 4] and report.sealed_revealed == 1


def test_reveals_before_the_part_read_are_unchecked_not_bad() -> None:
    name = "sealed-reveal-before-the-part-read"
    report = verify_entries(_lines(name), _trust(name), replay=replay_entry)
    assert report.ok, report.reason
    assert report.sealed_unchecked == 3 and report.sealed_unrevealed == []


def test_a_resumed_verification_checks_a_reveal_of_a_roll_read_before() -> None:
    # The server's incremental verification keeps the sealed rolls still open: a reveal
    # read on the next pass is checked against the roll read on the one before.
    lines = _lines("sealed-rolls-revealed")
    trust = _trust("sealed-rolls-revealed")
    first, state = verify_run(lines[:4], trust, replay=replay_entry)
    assert first.ok and state is not None and first.sealed_unrevealed == [2, 3, 4]
    report, _ = verify_run(lines[4:], trust, replay=replay_entry, resume=state)
    assert report.ok, report.reason
    assert report.sealed_revealed == 3 and report.sealed_unrevealed == []
    forged = json.loads(lines[4])
    forged["request"]["opening"]["blind"] = "0f" * 32
    bad, _ = verify_run([json.dumps(forged)], trust, replay=replay_entry, resume=state)
    assert bad.first_bad_seq == 5


def _stdlib(tmp_path: Path, entry: dict[str, Any], opening: dict[str, Any] | None) -> Any:
    (tmp_path / "entry.json").write_text(json.dumps(entry))
    args = [sys.executable, str(ROOT / "scripts" / "verify_roll.py"), str(tmp_path / "entry.json")]
    if opening is not None:
        (tmp_path / "opening.json").write_text(json.dumps(opening))
        args += ["--opening", str(tmp_path / "opening.json")]
    # The one-entry mode is the standard library's alone: no fairroll on the path.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}
    return subprocess.run(args, capture_output=True, text=True, check=False, env=env)


def test_the_stdlib_script_opens_each_sealed_roll_of_the_good_vector(tmp_path: Path) -> None:
    entries = [json.loads(line) for line in _lines("sealed-rolls-revealed")]
    by_seq = {e["seq"]: e for e in entries}
    for reveal in (e for e in entries if e["mechanic"] == "sealed.reveal"):
        done = _stdlib(tmp_path, by_seq[reveal["request"]["seq"]], reveal)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "opened" in done.stdout


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("sealed-reveal-edited-outcome", "does not open the commitment"),
        ("sealed-reveal-edited-dice", "does not open the commitment"),
        ("sealed-reveal-another-blind", "does not open the commitment"),
        ("sealed-reveal-of-another-roll", "does not open the commitment"),
        ("sealed-roll-committing-to-ground-dice", "does not derive from"),
        ("sealed-reveal-of-another-mechanic", "mechanic is not the one"),
    ],
)
def test_the_stdlib_script_refuses_an_opening_that_does_not_match(
    tmp_path: Path, name: str, words: str
) -> None:
    entries = [json.loads(line) for line in _lines(name)]
    reveal = entries[-1]
    sealed = next(e for e in entries if e["seq"] == reveal["request"]["seq"])
    done = _stdlib(tmp_path, sealed, reveal)
    assert done.returncode == 1, done.stdout
    assert words in done.stdout


def test_the_stdlib_script_asks_for_the_opening_of_a_sealed_roll(tmp_path: Path) -> None:
    sealed = json.loads(_lines("sealed-roll-never-revealed")[2])
    done = _stdlib(tmp_path, sealed, None)
    assert done.returncode == 1 and "pass --opening" in done.stdout


def test_the_auditors_report_counts_a_sealed_rolls_dice_once_opened() -> None:
    # A sealed roll's entry holds no dice: its dice are fairroll's own once its reveal
    # opened them, and counted there (never revealed: not counted, nothing to count).
    from fairroll.audit.report import audit_report  # noqa: PLC0415

    revealed = [json.loads(line) for line in _lines("sealed-rolls-revealed")]
    openings = [e["request"]["opening"] for e in revealed if e["mechanic"] == "sealed.reveal"]
    report = audit_report(revealed)
    assert sum(f.dice for f in report.derived_faces) == sum(len(o["dice"]) for o in openings)
    never = [json.loads(line) for line in _lines("sealed-roll-never-revealed")]
    assert sum(f.dice for f in audit_report(never).derived_faces) == len(openings[0]["dice"])
