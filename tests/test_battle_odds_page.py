"""Battle odds as the table page shows them (``/static/odds.js``): an exact answer with its
fractions, an estimate with its count of battles and 95 % interval, never "exactly"."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from fairroll.mechanics.fast_battle import BATTLE
from fairroll.rules import fast_battle as fb
from support import run_node

ROOT = Path(__file__).resolve().parents[1]
ODDS = ROOT / "service/fairroll/page/static/odds.js"
SCRIPT = ROOT / "tests/js/odds_words.mjs"


def shown(battle: fb.Battle, tmp_path: Path) -> list[list[str]]:
    answer = tmp_path / "answer.json"
    answer.write_bytes(msgspec.json.encode(BATTLE.odds_of(battle)))
    rows: list[list[str]] = run_node(SCRIPT, ODDS, answer)
    return rows


def fighter(name: str, **fields: object) -> fb.Combatant:
    base: dict[str, object] = {"name": name, "st": 3, "qk": 2, "in": 1, "ma": 1, "mr": 1}
    return msgspec.convert({**base, **fields}, fb.Combatant, from_attributes=True)


def test_estimated_battle_odds_never_say_exactly(tmp_path: Path) -> None:
    # The issue: "Estimated ... from 200 seeded battles (standard error 0.000)" above bars
    # reading "100 % (exactly 1/1)". Three fighters of 400 HP cannot fall in 20 turns.
    battle = fb.Battle(
        fighters=[fighter(n, max_hp=400, weapon="Standard Issue Sword") for n in "ABC"],
        max_turns=20,
    )
    rows = shown(battle, tmp_path)
    title = rows[0][0]
    assert re.fullmatch(
        r"Who wins \(estimated from 200 battles seeded from this request; each chance "
        r"within ±1\.[0-9] points at 95 %\)",
        title,
    )
    for _, label, text, detail in rows:
        assert "(95 % interval " in label
        assert "exact" not in text + detail
        assert text.startswith("≈ ")
        assert (
            detail.startswith("estimated: ") and " of 200 seeded battles, 95 % interval " in detail
        )
    cap = rows[-1]
    assert cap[1] == "Turn limit reached (95 % interval 98.1 to 100.0 %)"
    assert cap[2:] == [
        "≈ 100.0 %",
        "estimated: 200 of 200 seeded battles, 95 % interval 98.1 % to 100.0 %",
    ]


def test_exact_battle_odds_say_their_fraction(tmp_path: Path) -> None:
    battle = fb.Battle(
        fighters=[
            fighter("A", max_hp=2, weapon="Standard Issue Sword"),
            fighter("B", max_hp=2, weapon="Standard Issue Sword"),
        ],
        max_turns=3,
    )
    rows = shown(battle, tmp_path)
    assert rows[0][0] == "Who wins (exact)"
    for _, _, text, detail in rows:
        assert text.endswith(" %") and not text.startswith("≈")
        assert detail.startswith("exactly ")
