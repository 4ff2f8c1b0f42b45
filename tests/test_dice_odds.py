"""The odds of a die that explodes almost surely (issue 43, deliverable 3): ``1d20!>2``
(Roll20 reads ``>2`` as 2 or more: 19 faces in 20 explode), ``1d100!>2`` and their kin in
Foundry (``1d20x>2``) and avrae (``1d20e>2``), refused by the odds' time budget before.
Each is answered within the budget as served, counted as deep as EPSILON, the VTT's
limit or the answer's size allow, the rest in the last bar; the counted bars are
icepool's with the same cut; a refusal that remains is a 422 naming ``formula``."""

from __future__ import annotations

from fractions import Fraction

import httpx
import icepool
import msgspec
import pytest

from fairroll.mechanics import MECHANICS
from fairroll.odds import dice as odds_dice
from fairroll.odds.dice import MAX_ANSWER_BYTES, WORK_BUDGET_MS, Work, formula_odds
from fairroll.rules import RuleError
from fairroll.rules.dice import Formula, parse

ROLL = MECHANICS["dice.roll"]
#: Where icepool puts a die that would go on past the depth counted (``Die.explode``'s
#: ``end``): past every total counted here.
BEYOND = 10**12

#: A single die that explodes almost surely, in each dialect's own words.
ALMOST_SURELY = [
    ("1d20!>2", "roll20"),
    ("1d100!>2", "roll20"),
    ("1d20x>2", "foundry"),
    ("1d100x>2", "foundry"),
    ("1d20e>2", "avrae"),
    ("1d100e>2", "avrae"),
]


@pytest.mark.parametrize(("formula", "dialect"), ALMOST_SURELY)
def test_a_die_that_explodes_almost_surely_is_answered_within_the_budget(
    formula: str, dialect: str
) -> None:
    """Refused before (``1d20!>2``: "a chain brings it to about 14725 ms of work, 36.8
    times the 400 ms odds allow"; computed anyway, it took a minute): counted as deep as
    EPSILON or the answer's size allow, within the budget as served, every bar an exact
    fraction, the rest the last bar, its label where the die was cut, the whole answer
    within :data:`MAX_ANSWER_BYTES`."""
    work = Work(formula)  # the budget as served
    formula_odds(parse(formula, dialect), work)  # type: ignore[arg-type]
    assert work.spent <= WORK_BUDGET_MS * 1000
    ((text, what, depth),) = work.cuts
    assert (text, what) == (formula, "explosions")
    odds = ROLL.odds_of(Formula(formula=formula, dialect=dialect))  # type: ignore[arg-type]
    (total,) = odds.distributions
    *bars, beyond = total.chances
    assert beyond.outcome == "beyond"
    assert beyond.label.startswith(f"not counted: {formula}: explosions past {depth} a die.")
    assert sum(Fraction(c.probability.exact) for c in total.chances) == 1
    assert all(Fraction(c.probability.exact) > 0 for c in bars)
    assert len(msgspec.json.encode(odds)) <= MAX_ANSWER_BYTES


@pytest.mark.parametrize(
    ("formula", "dialect", "epsilon", "answer_bytes"),
    [
        # EPSILON made large, so that icepool answers the same cut within seconds
        ("1d20!>2", "roll20", Fraction(1, 4), MAX_ANSWER_BYTES),
        ("1d20x>2", "foundry", Fraction(1, 10), MAX_ANSWER_BYTES),
        ("1d20e>2", "avrae", Fraction(1, 10), MAX_ANSWER_BYTES),
        # the answer's size made small: it cuts first, as it does for a d100 as served
        ("1d100!>2", "roll20", Fraction(1, 10**12), 100_000),
        ("1d100x>2", "foundry", Fraction(1, 10**12), 100_000),
        ("1d100e>2", "avrae", Fraction(1, 10**12), 100_000),
    ],
)
def test_odds_of_a_die_that_explodes_almost_surely_are_icepools_at_the_same_cut(
    monkeypatch: pytest.MonkeyPatch,
    formula: str,
    dialect: str,
    epsilon: Fraction,
    answer_bytes: int,
) -> None:
    """Every counted bar is icepool's ``Die.explode`` at the depth the odds chose, a die
    that would go on past it worth :data:`BEYOND` (``end=``), and the last bar is the
    rest. (At the depth as served, icepool takes minutes: the benchmark compares them
    there, docs/rules/dice.md.)"""
    monkeypatch.setattr(odds_dice, "EPSILON", epsilon)
    monkeypatch.setattr(odds_dice, "MAX_ANSWER_BYTES", answer_bytes)
    parsed = parse(formula, dialect)  # type: ignore[arg-type]
    work = Work(formula, budget_ms=10**6)
    total, weights = formula_odds(parsed, work)
    ((_, _, depth),) = work.cuts
    (term,) = parsed.terms
    explode = term.explode
    assert explode is not None
    die = icepool.Die(list(term.faces)).explode(
        [f for f in term.faces if explode(f)], depth=depth, end=BEYOND
    )
    bars = {v: Fraction(q, die.denominator()) for v, q in die.items() if q and v < BEYOND}
    assert {v: Fraction(w, total) for v, w in weights.items()} == bars
    assert Fraction(total - sum(weights.values()), total) == 1 - sum(bars.values()) > 0


@pytest.mark.parametrize(
    ("formula", "dialect"),
    [
        ("1d20!>2", "roll20"),
        ("3d6!>4", "roll20"),
        ("2d10!p>7", "roll20"),  # a die after the first counts one less
        ("1d20!!>15", "roll20"),  # compounding: the chain is one die
        ("6d10>=8!>9", "roll20"),  # each die counts a success, or not
        ("3d6ro<2!>5", "roll20"),  # Roll20 rerolls every die of a chain alike
        ("3d6r1x>4", "foundry"),  # the pool dialects reroll the first die only
        ("2d8xo>5", "foundry"),  # once: one explosion, the last die stands
        ("2d12e>9", "avrae"),
        ("2dF!>0", "roll20"),  # an exploding face counts 0: one level at a time still
    ],
)
def test_the_chain_as_one_division_is_the_chain_built_level_by_level(
    monkeypatch: pytest.MonkeyPatch, formula: str, dialect: str
) -> None:
    """The division (odds/dice_chain.py) gives the weights the level-by-level build gives,
    exactly, and cuts where it cuts."""
    monkeypatch.setattr(odds_dice, "EPSILON", Fraction(1, 10**4))
    parsed = parse(formula, dialect)  # type: ignore[arg-type]
    divided = Work(formula, budget_ms=10**6)
    ours = formula_odds(parsed, divided)
    monkeypatch.setattr(odds_dice, "_divided", lambda *_: None)
    levels = Work(formula, budget_ms=10**6)
    assert ours == formula_odds(parsed, levels)
    assert divided.cuts == levels.cuts


def test_the_answers_size_cuts_a_die_where_its_vtt_would_go_on() -> None:
    """avrae's one die goes to 999 explosions, the VTT's limit, where its last die would
    stand; a d100 that explodes 99 times in 100 counted that deep has some 100,000
    totals of 2,000 digits: it is cut where the answer stays within its size, said so,
    and the rest is beyond, not spread."""
    work = Work("1d100e>1")
    total, weights = formula_odds(parse("1d100e>1", "avrae"), work)
    ((_, _, depth),) = work.cuts
    assert depth < 999
    assert max(weights) <= 100 * (depth + 1)
    assert Fraction(total - sum(weights.values()), total) > Fraction(1, 10)


def test_a_refusal_that_remains_is_a_422_naming_the_formula_and_the_limit(
    client: httpx.Client,
) -> None:
    """Two such dice add two chains thousands of totals wide: refused by the budget, as a
    422 on ``formula`` that says the limit, never a 500 nor a silent cap; one such die
    in each dialect is answered, its last bar the rest."""
    with pytest.raises(RuleError) as refused:
        ROLL.odds_of(Formula(formula="2d20!>2"))
    assert refused.value.field == "formula"
    answer = client.post("/v1/dice/rolls/odds", json={"formula": "2d20!>2"})
    assert answer.status_code == 422, answer.text
    (invalid,) = answer.json()["invalid_params"]
    assert invalid["name"] == "formula"
    assert f"times the {WORK_BUDGET_MS} ms odds allow" in invalid["reason"]
    for formula, dialect in (("1d20x>2", "foundry"), ("1d20e>2", "avrae")):
        answer = client.post(
            "/v1/dice/rolls/odds", json={"formula": formula, "dialect": dialect}, timeout=60
        )
        assert answer.status_code == 200, answer.text
        (total,) = answer.json()["distributions"]
        assert total["chances"][-1]["outcome"] == "beyond"
