"""Entries an older server recorded replay under the rules it recorded them by.

``fixtures/earlier_revisions.json`` holds rolls made by the first revision's own code (main
before Tribute's Result held the Rank and before Fast Battle's standard issue purchase and
no-cut limits; ``fixtures/make_earlier_revisions.py`` made them, run against that code).
Sealed into a log, they verify through ``verify_entries`` with ``replay_entry`` and through
``fairroll verify``, counted as replayed under an earlier revision; altered, they fail.
"""

from __future__ import annotations

import copy
import json
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest

from fairroll.audit import Draft, Head, Trust, load_signer, verify_entries
from fairroll.audit.signing import seal
from fairroll.mechanics import MECHANICS, RevisionTally, replay_entry
from fairroll.randomness import Die, SeededDice
from fairroll.rules import fast_battle as fb
from support import TEST_ROOT, TEST_SIGNING_KEY, fairroll_cli

ROLLS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "fixtures" / "earlier_revisions.json").read_text()
)
LABELS = [roll["label"] for roll in ROLLS]
#: Rolls of the fixture today's rules give alike: armour taking QK below 0 changes
#: nothing an attack reads (a weapon's requirement of 0 is none), so it replays as current.
CURRENT_TOO = {"attack, QK below 0 in armour"}
CHANGED = [label for label in LABELS if label not in CURRENT_TOO]
TABLE = "old-campaign"
TIME = "2026-01-01T00:00:00Z"
SIGNER = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)


def sealed(rolls: list[dict[str, Any]]) -> list[str]:
    """The rolls as a table's log: chosen-seed entries, chained and signed in order."""
    head, lines = Head.empty(), []
    for index, roll in enumerate(rolls):
        draft = Draft(
            table=TABLE,
            mechanic=roll["mechanic"],
            request=roll["request"],
            source="chosen",
            seed=roll["seed"],
            dice=msgspec.convert(roll["dice"], tuple[Die, ...]),
            outcome=roll["outcome"],
        )
        entry = seal(draft, head, SIGNER, TIME, publish=index == 0)
        head = Head(entry.seq, entry.entry_hash)
        lines.append(msgspec.json.encode(entry).decode())
    return lines


def roll_of(label: str) -> dict[str, Any]:
    return copy.deepcopy(next(roll for roll in ROLLS if roll["label"] == label))


def test_every_fixture_roll_is_one_the_current_rules_resolve_otherwise() -> None:
    """The fixture pins the change: today's rules refuse each roll or give another outcome."""
    for roll in ROLLS:
        mechanic = MECHANICS[roll["mechanic"]]
        request = msgspec.convert(roll["request"], mechanic.input_type)
        try:
            outcome = mechanic.resolve(request, SeededDice(roll["seed"]))
        except ValueError:
            continue
        today = json.loads(msgspec.json.encode(outcome))
        assert (today == roll["outcome"]) == (roll["label"] in CURRENT_TOO), roll["label"]


def test_a_log_recorded_by_the_first_revision_verifies_and_counts_its_entries() -> None:
    lines = sealed(ROLLS)
    tally = RevisionTally()
    report = verify_entries(lines, Trust(keys=None, root=TEST_ROOT), replay=tally)
    assert report.ok, report.reason
    assert report.outcomes_replayed
    assert tally.counts() == {
        "fast-battle.battle": 1,
        "fast-battle.character": 3,
        "fast-battle.initiative": 1,
        "fast-battle.level-up": 1,
        "tribute.test": 3,
    }
    assert verify_entries(lines, Trust(keys=None), replay=replay_entry).ok


@pytest.mark.parametrize("label", CHANGED)
def test_each_first_revision_entry_replays_under_that_revision(label: str) -> None:
    """From its seed, and from its recorded dice (as supplied dice replay)."""
    roll = roll_of(label)
    for seed in (roll["seed"], None):
        replayed = replay_entry(roll, seed)
        assert replayed.revision is not None
        assert replayed.revision.startswith("the first revision")
        assert msgspec.json.encode(list(replayed), order="sorted") == msgspec.json.encode(
            [roll["dice"], roll["outcome"]], order="sorted"
        )


#: One change per fixture roll to an outcome that neither revision gives on its dice.
ALTERED = {
    "tribute rank 1": lambda o: o["actor"]["chosen"].update(
        result=o["actor"]["chosen"]["result"] + 1
    ),
    "tribute opposed, revised": lambda o: o.update(opposition_result=o["opposition_result"] - 1),
    "tribute opposed, classic": lambda o: o.update(outcome="win"),
    "character with a Great Axe": lambda o: o.update(gold=5),
    "character with no weapon": lambda o: o["character"].update(max_hp=9, hp=9),
    "character in Chain Mail": lambda o: o["character"].update(weapon="Great Axe"),
    "level-up cut at 999 max HP": lambda o: o["character"].update(max_hp=998),
    "initiative, QK below 0 in armour": lambda o: o.update(order=["Ash", "Tin"]),
    "attack, QK below 0 in armour": lambda o: o.update(damage=1, defender_hp=5),
    "battle, a higher-level loser's gold cut at 0": lambda o: o["rewards"][0]["rewards"].update(
        loser_gold=1
    ),
}


@pytest.mark.parametrize("label", LABELS)
def test_a_first_revision_entry_with_its_outcome_altered_still_fails(label: str) -> None:
    """An earlier revision widens what replays only to what that revision gives: an outcome
    neither revision gives on the entry's dice fails, naming its seq."""
    rolls = [copy.deepcopy(r) for r in ROLLS]
    index = LABELS.index(label)
    ALTERED[label](rolls[index]["outcome"])
    tally = RevisionTally()
    report = verify_entries(sealed(rolls), Trust(keys=None, root=TEST_ROOT), replay=tally)
    assert not report.ok
    assert report.first_bad_seq == index + 1
    assert str(report.reason).startswith(
        (
            "the recorded outcome does not follow from the dice",
            "the request does not replay",
            "replaying the request rolls different dice",
        )
    )
    assert index + 1 not in tally.into


def test_a_tribute_outcome_half_of_each_revision_fails() -> None:
    """Today's ``test`` beside the first revision's ``result`` is neither revision's record."""
    roll = roll_of("tribute rank 1")
    chosen = roll["outcome"]["actor"]["chosen"]
    chosen["test"] = chosen["result"]
    report = verify_entries(sealed([roll]), Trust(keys=None), replay=replay_entry)
    assert not report.ok
    assert report.reason == "the recorded outcome does not follow from the dice"


def test_a_current_entry_replays_under_the_current_rules() -> None:
    """The current rules answer first: a roll they made is not counted as an earlier one."""
    roll = roll_of("tribute opposed, revised")
    mechanic = MECHANICS[roll["mechanic"]]
    dice = SeededDice(roll["seed"])
    outcome = mechanic.resolve(msgspec.convert(roll["request"], mechanic.input_type), dice)
    roll["outcome"] = msgspec.to_builtins(outcome)
    assert replay_entry(roll, roll["seed"]).revision is None
    tally = RevisionTally()
    assert verify_entries(sealed([roll]), Trust(keys=None), replay=tally).ok
    assert tally.counts() == {}


def test_new_rolls_use_the_current_rules_and_an_old_rules_roll_made_today_counts_as_earlier() -> (
    None
):
    """The service rolls through ``Mechanic.resolve``, the current rules: a Great Axe for a new
    character is refused today. A server that still resolved it the old way would record an
    entry that verifies, but only as an earlier revision: the verifier counts it so, it is
    never taken for a roll of the current rules (the log cannot say when it was made)."""
    roll = roll_of("character with a Great Axe")
    mechanic = MECHANICS[roll["mechanic"]]
    request = msgspec.convert(roll["request"], mechanic.input_type)
    with pytest.raises(ValueError, match="not standard issue"):
        mechanic.resolve(request, SeededDice("today"))
    old_way = partial(fb.resolve_new_character, revision=fb.FIRST)
    dice = SeededDice("today")
    made_today = {
        **roll,
        "seed": "today",
        "outcome": msgspec.to_builtins(old_way(request, dice)),
        "dice": msgspec.to_builtins(dice.dice),
    }
    tally = RevisionTally()
    assert verify_entries(sealed([made_today]), Trust(keys=None), replay=tally).ok
    assert tally.counts() == {"fast-battle.character": 1}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_fairroll_verify_accepts_a_first_revision_log_and_says_how_many_replayed_so(
    tmp_path: Path, workers: str
) -> None:
    """Through the CLI, in one process and with workers replaying entries elsewhere: the
    count is the same, by mechanic, in the text and in the JSON report."""
    export = tmp_path / "export.ndjson"
    export.write_text("\n".join(sealed(ROLLS)) + "\n")
    run = fairroll_cli("verify", export, "--allow-unsigned", "--workers", workers)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "checked chain, seeds, outcomes" in run.stdout
    assert "3 tribute.test entries: follows from its dice by an earlier revision" in run.stdout
    assert "1 fast-battle.level-up entry: follows from its dice by an earlier revision" in (
        run.stdout
    )
    said = json.loads(
        fairroll_cli("verify", export, "--allow-unsigned", "--workers", workers, "--json").stdout
    )
    assert said["verification"]["earlier_revisions"] == {
        "fast-battle.battle": 1,
        "fast-battle.character": 3,
        "fast-battle.initiative": 1,
        "fast-battle.level-up": 1,
        "tribute.test": 3,
    }


def test_fairroll_verify_fails_a_first_revision_entry_altered(tmp_path: Path) -> None:
    rolls = [copy.deepcopy(r) for r in ROLLS]
    ALTERED["level-up cut at 999 max HP"](rolls[6]["outcome"])
    export = tmp_path / "export.ndjson"
    export.write_text("\n".join(sealed(rolls)) + "\n")
    run = fairroll_cli("verify", export, "--allow-unsigned", "--workers", "1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAIL at seq 7" in run.stdout
