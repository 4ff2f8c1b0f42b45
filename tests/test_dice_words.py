"""The words said of a dice roll and of a formula refused: each says what happened, and
nothing a reader could take for something else."""

from __future__ import annotations

from pathlib import Path

import httpx
import msgspec

from fairroll.audit import Draft, Head, load_signer
from fairroll.audit.signing import seal
from fairroll.mechanics.dice import read_roll
from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules import dice
from support import TEST_SIGNING_KEY, fairroll_cli


def words(formula: str, dialect: dice.Dialect, faces: dict[str, list[int]]) -> str:
    request = dice.Formula(formula=formula, dialect=dialect)
    return read_roll(request, dice.resolve_formula(request, SuppliedDice(faces))).text


def test_a_formula_its_dialect_cannot_read_is_not_a_formula_not_against_the_rules(
    client: httpx.Client, table: str
) -> None:
    """``2d6+`` is a typo: its own problem type and title, still a 422 naming ``formula``;
    a well-formed formula the limits refuse stays a rule violation."""
    answer = client.post("/v1/dice/rolls", json={"table": table, "formula": "2d6+"})
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert (problem["type"], problem["title"]) == (
        "urn:fairroll:problem:not-a-formula",
        "Not a formula",
    )
    assert problem["invalid_params"][0]["name"] == "formula"
    assert "syntax error" in problem["invalid_params"][0]["reason"]
    refused = client.post("/v1/dice/rolls", json={"table": table, "formula": "101d6"}).json()
    assert (refused["type"], refused["title"]) == (
        "urn:fairroll:problem:rule-violation",
        "Against the rules",
    )


def test_fairroll_verify_counts_one_die_as_a_die(tmp_path: Path) -> None:
    """The report's faces counted: ``d20: 1 die``, not ``1 dice``."""
    request = {"formula": "1d20"}
    source = SeededDice("one-die")
    outcome = dice.resolve_formula(msgspec.convert(request, dice.Formula), source)
    draft = Draft(
        table="one-die",
        mechanic="dice.roll",
        request=request,
        source="chosen",
        seed="one-die",
        dice=source.dice,
        outcome=msgspec.to_builtins(outcome),
    )
    signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    entry = seal(draft, Head.empty(), signer, "2026-12-03T00:00:00Z", publish=True)
    export = tmp_path / "export.ndjson"
    export.write_text(msgspec.json.encode(entry).decode() + "\n")
    run = fairroll_cli("verify", export, "--allow-unsigned", "--workers", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "  d20: 1 die, " in run.stdout
    assert "1 dice" not in run.stdout


def test_an_empty_term_says_it_rolled_no_dice() -> None:
    """avrae's ``0d6`` is 0: its term is said, with no dice, not left as ``0d6: ``."""
    assert words("0d6+3", "avrae", {}) == "0 + 3 = 3 — 0d6: no dice"
    said = words("1d20+0d6", "avrae", {"d20": [12]})
    assert said == "12 + 0 = 12 — 1d20: 12; 0d6: no dice"


def test_an_avrae_adv_label_is_said_to_be_the_bots_option_not_advantage() -> None:
    """``1d20+5 adv`` is 1d20+5 with the comment "adv" in d20's grammar: the words say it
    was not rolled at advantage, lest the label be taken for what was rolled."""
    said = words("1d20+5 adv", "avrae", {"d20": [10]})
    assert said.startswith("10 + 5 = 15 — 1d20: 10. ")
    assert "not rolled at advantage" in said and "avrae's bot option" in said
    assert "not rolled at disadvantage" in words("1d20 Dis Stealth", "avrae", {"d20": [3]})
    assert words("1d20 # adv", "roll20", {"d20": [10]}) == "10 — 1d20: 10"
    assert words("1d20 adventure", "avrae", {"d20": [10]}) == "10 — 1d20: 10"


def test_the_words_say_when_a_vtts_limit_stopped_a_die() -> None:
    """A limit never stops a die silently: the words name it, and the VTT whose it is
    (where the VTT fails such a roll, that fairroll stopped instead)."""
    exploded = words("1d6!", "roll20", {"d6": [6] * 1001})
    assert exploded.endswith(
        ". 1d6!: a die exploded 1000 times: Roll20's reading stops a die there, as "
        "rpg-dice-roller does (the last die stands)"
    )
    rerolled = words("1d6r1", "roll20", {"d6": [1] * 1001})
    assert "1d6r1: a die was rerolled 1000 times" in rerolled
    checked = words("1d6x", "foundry", {"d6": [6] * 1001})
    assert "1d6x: a modifier checked 1000 results: Foundry VTT fails a roll there" in checked
    rolled = words("1d6e6", "avrae", {"d6": [6] * 1000})
    assert "1d6e6: 1000 dice rolled: avrae's d20 fails a roll past that" in rolled
    # Short of the limit nothing is said.
    assert "times" not in words("1d6!", "roll20", {"d6": [6] * 15 + [2]})
