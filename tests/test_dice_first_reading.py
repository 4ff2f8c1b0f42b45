"""Dice entries recorded under the first reading of the dialects still replay.

The dialects were re-read to match each VTT's own roller (docs/rules/dice.md says what
changed). An honest log a server kept before that holds outcomes today's reading does not
give: ``dice.roll`` declares the first reading (frozen in :mod:`fairroll.rules.dice_first`)
as an earlier revision, so such an entry replays under it and is counted so, and an
outcome neither reading gives still fails. Each formula here is one rule that changed; its
entry is made by the frozen code itself, as the old server recorded it.
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
import sys
import types
from pathlib import Path
from typing import Any

import msgspec
import pytest

from fairroll.audit import Draft, Head, Trust, load_signer, verify_entries
from fairroll.audit.signing import seal
from fairroll.mechanics import MECHANICS, RevisionTally, replay_entry
from fairroll.mechanics.dice import FIRST_READING
from fairroll.randomness import Die, SeededDice
from fairroll.rules import dice, dice_first
from support import TEST_ROOT, TEST_SIGNING_KEY, fairroll_cli

SIGNER = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
#: A seed on which each formula below rolls otherwise today (the first test pins it).
SEED = "s0"
REPO = Path(__file__).resolve().parents[1]

#: One formula per rule the re-reading changed, by the rule.
CHANGED = {
    "foundry ms is the total less its target": ("foundry", "2d20ms>=15"),
    "foundry cs compares the face, not what min made it": ("foundry", "4d6min3cs>=3"),
    "avrae joined selectors are one operator": ("avrae", "4d6kh1kl1"),
    "avrae a set keeps its members by value": ("avrae", "(3d6,3d6,3d6)k>10"),
    "roll20 a group's failing sub-roll takes one away": ("roll20", "{3d6,3d6,3d6}>10f<5"),
}


def first_reading_roll(dialect: str, formula: str, seed: str = SEED) -> dict[str, Any]:
    """What a server of the first reading recorded: its request, seed, dice and outcome."""
    request = {"formula": formula, "dialect": dialect}
    source = SeededDice(seed)
    outcome = dice_first.resolve_formula(msgspec.convert(request, dice_first.Formula), source)
    return {
        "mechanic": "dice.roll",
        "request": request,
        "seed": seed,
        "dice": msgspec.to_builtins(source.dice),
        "outcome": msgspec.to_builtins(outcome),
    }


def sealed(rolls: list[dict[str, Any]]) -> list[str]:
    """The rolls as a table's log: chosen-seed entries, chained and signed in order."""
    head, lines = Head.empty(), []
    for index, roll in enumerate(rolls):
        draft = Draft(
            table="old-dice-table",
            mechanic=roll["mechanic"],
            request=roll["request"],
            source="chosen",
            seed=roll["seed"],
            dice=msgspec.convert(roll["dice"], tuple[Die, ...]),
            outcome=roll["outcome"],
        )
        entry = seal(draft, head, SIGNER, "2026-11-01T00:00:00Z", publish=index == 0)
        head = Head(entry.seq, entry.entry_hash)
        lines.append(msgspec.json.encode(entry).decode())
    return lines


ROLLS = [first_reading_roll(*written) for written in CHANGED.values()]


@pytest.mark.parametrize("rule", CHANGED)
def test_each_changed_rule_gives_another_outcome_today(rule: str) -> None:
    """The entries pin the change: today's reading refuses each or rolls it otherwise."""
    roll = ROLLS[list(CHANGED).index(rule)]
    source = SeededDice(roll["seed"])
    try:
        today = dice.resolve_formula(msgspec.convert(roll["request"], dice.Formula), source)
    except ValueError:
        return
    then = msgspec.json.encode([roll["dice"], roll["outcome"]])
    assert msgspec.json.encode([source.dice, today]) != then


@pytest.mark.parametrize("rule", CHANGED)
def test_a_first_reading_entry_replays_under_the_first_reading(rule: str) -> None:
    """From its seed, and from its recorded dice (as supplied dice replay)."""
    roll = ROLLS[list(CHANGED).index(rule)]
    for seed in (roll["seed"], None):
        replayed = replay_entry(roll, seed)
        assert replayed.revision == FIRST_READING.name
        assert list(replayed) == [roll["dice"], roll["outcome"]]


def test_a_first_reading_log_verifies_and_counts_its_entries() -> None:
    tally = RevisionTally()
    report = verify_entries(sealed(ROLLS), Trust(keys=None, root=TEST_ROOT), replay=tally)
    assert report.ok, report.reason
    assert tally.counts() == {"dice.roll": len(ROLLS)}


def test_a_roll_of_todays_reading_is_not_counted_as_the_first() -> None:
    """The current reading answers first: a roll it made replays with no revision."""
    request = {"formula": "4d6kh1kl1", "dialect": "avrae"}
    source = SeededDice(SEED)
    outcome = MECHANICS["dice.roll"].resolve(msgspec.convert(request, dice.Formula), source)
    roll = {**ROLLS[0], "request": request, "dice": msgspec.to_builtins(source.dice)}
    roll["outcome"] = msgspec.to_builtins(outcome)
    assert replay_entry(roll, SEED).revision is None


@pytest.mark.parametrize("rule", CHANGED)
def test_a_first_reading_entry_whose_outcome_neither_reading_gives_fails(rule: str) -> None:
    """The earlier revision widens what replays only to what the first reading gives."""
    rolls = copy.deepcopy(ROLLS)
    index = list(CHANGED).index(rule)
    rolls[index]["outcome"]["total"] += 1
    tally = RevisionTally()
    report = verify_entries(sealed(rolls), Trust(keys=None, root=TEST_ROOT), replay=tally)
    assert not report.ok
    assert report.first_bad_seq == index + 1
    assert report.reason == "the recorded outcome does not follow from the dice"
    assert index + 1 not in tally.into


def test_fairroll_verify_says_ok_and_counts_the_first_reading_entries(tmp_path: Path) -> None:
    export = tmp_path / "export.ndjson"
    export.write_text("\n".join(sealed(ROLLS)) + "\n")
    run = fairroll_cli("verify", export, "--allow-unsigned", "--workers", "1", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    said = json.loads(run.stdout)
    assert said["verification"]["earlier_revisions"] == {"dice.roll": len(ROLLS)}
    text = fairroll_cli("verify", export, "--allow-unsigned", "--workers", "1").stdout
    assert f"{len(ROLLS)} dice.roll entries: follows from its dice by an earlier revision" in text


def test_fairroll_verify_fails_a_first_reading_entry_altered(tmp_path: Path) -> None:
    rolls = copy.deepcopy(ROLLS)
    rolls[2]["outcome"]["total"] -= 1
    export = tmp_path / "export.ndjson"
    export.write_text("\n".join(sealed(rolls)) + "\n")
    run = fairroll_cli("verify", export, "--allow-unsigned", "--workers", "1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAIL at seq 3" in run.stdout


def test_the_first_reading_imports_nothing_of_todays_dice() -> None:
    """Frozen code cannot drift with the package it was copied from."""
    package = REPO / "service" / "fairroll" / "rules" / "dice_first"
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("fairroll.rules.dice."), module.name
                assert node.module != "fairroll.rules.dice", module.name
                if node.module == "fairroll.rules":
                    assert "dice" not in [alias.name for alias in node.names], module.name


def test_the_python_client_vendors_the_first_reading_and_its_grammars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client replays what ``fairroll verify`` replays: its build hook copies the frozen
    package, grammars included, with the mechanics (hatchling stood in for: only the copy
    is run)."""
    interface = types.ModuleType("hatchling.builders.hooks.plugin.interface")
    interface.BuildHookInterface = object  # type: ignore[attr-defined]
    for name in ("hatchling", "hatchling.builders", "hatchling.builders.hooks"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "hatchling.builders.hooks.plugin", types.ModuleType("p"))
    monkeypatch.setitem(sys.modules, interface.__name__, interface)
    monkeypatch.syspath_prepend(str(REPO / "clients" / "python"))
    monkeypatch.delitem(sys.modules, "hatch_build", raising=False)
    hatch_build = importlib.import_module("hatch_build")
    files = hatch_build.vendored(REPO / "service")
    for part in ("__init__.py", "build.py", "roll20.lark", "foundry.lark", "avrae.lark"):
        assert f"rules/dice_first/{part}" in files
    assert "from fairroll_client._core.rules import dice, dice_first" in files["mechanics/dice.py"]
