"""Rolls in words (``/static/words.js``), in each system's own terms, on the spec's
examples: the seeds' worked examples as the server answered them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import run_node

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "service" / "fairroll" / "page" / "static" / "words.js"
EXAMPLES = ROOT / "service" / "fairroll" / "spec" / "examples.json"
SCRIPT = ROOT / "tests" / "js" / "describe_examples.mjs"


@pytest.fixture(scope="module")
def described() -> dict[tuple[str, str], tuple[str, str, list[str]]]:
    rows = run_node(SCRIPT, WORDS, EXAMPLES)
    return {(op, name): (asked, came, dice) for op, name, asked, came, dice in rows}


@pytest.mark.parametrize(
    ("operation", "name", "asked", "came"),
    [
        (
            "rollTftContest",
            "roth-vs-sheena",
            "Roth (attribute 16, 2 talents) against Sheena (attribute 12)",
            "Roth wins — Level 1 victory",
        ),
        (
            "rollTftContest",
            "discard-the-high-pair",
            "A (4 dice) against B (3 dice)",
            "A wins — Level 2 victory",
        ),
        ("rollFbc", "pit-climb", "Pool 10, risking 5 dice", "2 successes; Pool 7"),
        (
            "resolveFbcConflict",
            "joe-sue-fred",
            "Conflict: Joe, Sue, Fred",
            "Narration order: Joe, Sue, Fred",
        ),
        (
            "rollTributeTest",
            "plus-five-on-d6",
            "4 FOCUS dice and 2 BURDEN dice (d6), rank 0, difficulty 5",
            "Match with no Profit or Waste (+5 against +5; rank 0, dice +5)",
        ),
        (
            "rollTributeTest",
            "option-1a-example-2",
            "2 FOCUS dice and 3 BURDEN dice (d6), rank 0 against GM",
            "Fail with 1 Waste (-3 against +4; rank 0, dice -3)",
        ),
        (
            "rollStatSkillCheck",
            "sharpshooter",
            "Agility 4 + Firearms 5 against TN 10",
            "Full success",
        ),
        (
            "rollStatSkillCheck",
            "chasm-jump",
            "Muscle 4 + Athletics 4 against TN 12",
            "Partial success — Stat fell short",
        ),
        (
            "rollStatSkillContest",
            "both-make-headway",
            "Stat 5 / Skill 3 against Stat 3 / Skill 5",
            "A: Partial success — Skill fell short; B: Partial success — Stat fell short",
        ),
        (
            "rollStatSkillComplexCheck",
            "partial-counts-one-full-counts-two",
            "Stat 5 + Skill 5 against TN 10, 5 successes needed",
            "Done in 3 periods (3 x 1 hour)",
        ),
        (
            "createFastBattleCharacter",
            "zippy-the-mean",
            "Create Zippy the Mean",
            "Zippy the Mean: ST 3, QK 1, IN 1, MA 1, MR 2, HP 6, 2 gold pieces left",
        ),
        (
            "rollFastBattleAttack",
            "zippy-strikes",
            "Zippy the Mean attacks Zippy's twin",
            "2 points of damage, 4 HP left",
        ),
        (
            "castFastBattleSpell",
            "spark",
            "Grub casts Spark at Zippy the Mean",
            "Spark has no effect",
        ),
        (
            "rollFastBattleInitiative",
            "higher-qk-first",
            "Initiative: Zippy the Mean, Grub",
            "Order: Grub, Zippy the Mean",
        ),
        (
            "levelUpFastBattleCharacter",
            "two-and-a-half-plus-one",
            "Level up Zippy the Mean (2.5 XP + 1)",
            "Level 2, 0.5 XP left",
        ),
    ],
)
def test_examples_in_words(
    described: dict[tuple[str, str], tuple[str, str, list[str]]],
    operation: str,
    name: str,
    asked: str,
    came: str,
) -> None:
    assert described[operation, name][:2] == (asked, came)


def test_every_roll_example_is_described_and_coins_are_heads_or_tails(
    described: dict[tuple[str, str], tuple[str, str, list[str]]],
) -> None:
    examples = json.loads(EXAMPLES.read_text())
    rolls = {
        (e["operation"], e["name"])
        for e in examples
        if "receipt" in (e["response"] or {}) and "dice" in e["response"]
    }
    assert set(described) == rolls
    battle = described["fightFastBattle", "zippy-vs-grub"]
    assert battle[1].split(" wins after ")[0] in ("Zippy the Mean", "Grub")
    assert set(described["createFastBattleCharacter", "zippy-the-mean"][2]) == {"heads", "tails"}
    assert described["rollFbc", "pit-climb"][2] == [
        "2 on a d6",
        "1 on a d6",
        "1 on a d6",
        "4 on a d6",
        "5 on a d6",
    ]
