"""The odds charts of the table page (``/static/odds.js``) on the spec's odds examples:
every odds operation is drawn, every bar carries its exact fraction, and every chart
(one distribution of the answer) adds up to exactly 1."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from support import run_node

ROOT = Path(__file__).resolve().parents[1]
ODDS = ROOT / "service/fairroll/page/static/odds.js"
EXAMPLES = ROOT / "service/fairroll/spec/examples.json"
SCRIPT = ROOT / "tests/js/chart_examples.mjs"


@pytest.fixture(scope="module")
def drawn() -> dict[tuple[str, str], tuple[list[dict[str, Any]], list[list[str]]]]:
    rows = run_node(SCRIPT, ODDS, EXAMPLES)
    return {(op, name): (charts, shown) for op, name, charts, shown in rows}


def test_every_odds_operation_is_drawn_exactly(
    drawn: dict[tuple[str, str], tuple[list[dict[str, Any]], list[list[str]]]],
) -> None:
    spec = json.loads((ROOT / "openapi/openapi.json").read_text())
    odds_operations = {
        methods["post"]["operationId"]
        for path, methods in spec["paths"].items()
        if path.endswith("/odds")
    }
    assert {op for op, _ in drawn} == odds_operations
    for (operation, name), (charts, _) in drawn.items():
        assert charts, (operation, name)
        for chart in charts:
            assert chart["title"] and chart["bars"], (operation, chart)
            for bar in chart["bars"]:
                assert 0 <= float(Fraction(bar["exact"])) == pytest.approx(bar["value"], abs=1e-15)
            # One distribution type: every chart is a whole distribution.
            total = sum(Fraction(bar["exact"]) for bar in chart["bars"])
            assert total == 1, (operation, chart["title"], total)


def test_charts_speak_the_systems_terms(
    drawn: dict[tuple[str, str], tuple[list[dict[str, Any]], list[list[str]]]],
) -> None:
    tft, shown = drawn["tftContestOdds", "roth-vs-sheena"]
    assert tft[0]["title"] == "Who wins (7 dice against 4)"
    assert [b["label"] for b in tft[0]["bars"]] == [
        "Roth wins",
        "Sheena wins",
        "No victor: every die tied",
        "No victor: the tied dice ran out",
    ]
    assert shown[0][:2] == ["72.0 %", "27.3 %"]
    check, _ = drawn["statSkillCheckOdds", "sharpshooter"]
    assert {b["label"] for b in check[0]["bars"]} == {
        "Failure",
        "Full success",
        "Partial — Stat fell short",
        "Partial — Skill fell short",
    }
    spell, shown = drawn["fastBattleSpellOdds", "spark"]
    # Zippy's MR 2 alone is half of Spark's best (2 heads + MA 0 above the minimum).
    assert spell[0]["bars"][0] == {"label": "Takes effect", "exact": "0/1", "value": 0}
    assert shown[0] == ["0 %", "100 %"]
    first, _ = drawn["fastBattleInitiativeOdds", "higher-qk-first"]
    assert [(b["label"], b["exact"]) for b in first[0]["bars"]] == [
        ("Zippy the Mean", "0/1"),
        ("Grub", "1/1"),
    ]
    level, _ = drawn["fastBattleLevelUpOdds", "two-and-a-half-plus-one"]
    assert level[0]["title"] == "Max HP after 1 level"
    conflict, _ = drawn["fbcConflictOdds", "joe-sue-fred"]
    assert [c["title"] for c in conflict] == ["Joe: successes", "Sue: successes", "Fred: successes"]
