"""Exact Tribute odds: brute force on small cases, icepool (the oracle) on larger ones."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import icepool
import pytest

from fairroll.odds.tribute import tribute_odds, tribute_test_odds
from fairroll.randomness import SuppliedDice
from fairroll.rules import tribute
from fairroll.rules.tribute import best_choice

Table = dict[tuple[str, int, int], Fraction]


def flat(sides: int, focus: int, burden: int, need: int, rule: str, counts: bool) -> Table:
    odds = tribute_odds(
        sides=sides, focus=focus, burden=burden, need=need, rule=rule, failure_counts=counts
    )
    # Rebuild (outcome, profit, waste) only where the engine can be compared: totals.
    assert odds.win + odds.match + odds.fail == 1
    assert sum(odds.joint.values()) == 1
    return {("win", 0, 0): odds.win, ("match", 0, 0): odds.match, ("fail", 0, 0): odds.fail} | {
        ("pw", p, w): prob for (p, w), prob in odds.joint.items() if prob
    }


def reference(counter: Counter[tuple[str, int, int]], total: int) -> Table:
    table: Counter[tuple[str, int, int]] = Counter()
    for (outcome, profit, waste), ways in counter.items():
        table[outcome, 0, 0] += ways
        table["pw", profit, waste] += ways
    return {key: Fraction(ways, total) for key, ways in table.items()}


def brute_force(sides: int, focus: int, burden: int, need: int, rule: str, counts: bool) -> Table:
    seen: Counter[tuple[str, int, int]] = Counter()
    for f in itertools.product(range(1, sides + 1), repeat=focus):
        for b in itertools.product(range(1, sides + 1), repeat=burden):
            c = best_choice(f, b, need=need, rule=rule, failure_counts=counts)
            seen[c.outcome, c.profit, c.waste] += 1
    return reference(seen, sides ** (focus + burden))


CASES = [
    (sides, focus, burden, need, rule, counts)
    for sides, focus, burden in [(4, 1, 1), (4, 3, 2), (4, 2, 3), (6, 2, 2), (6, 3, 1)]
    for need in (-sides, -2, 0, 1, 3, sides)
    for rule in ("revised", "classic")
    for counts in (False, True)
]


@pytest.mark.parametrize(("sides", "focus", "burden", "need", "rule", "counts"), CASES)
def test_matches_brute_force(
    sides: int, focus: int, burden: int, need: int, rule: str, counts: bool
) -> None:
    engine = {k: v for k, v in flat(sides, focus, burden, need, rule, counts).items() if v}
    assert engine == brute_force(sides, focus, burden, need, rule, counts)


def icepool_reference(
    sides: int, focus: int, burden: int, need: int, rule: str, counts: bool
) -> Table:
    def score(f: tuple[int, ...], b: tuple[int, ...]) -> tuple[str, int, int]:
        c = best_choice(f, b, need=need, rule=rule, failure_counts=counts)
        return (c.outcome, c.profit, c.waste)

    die = icepool.map(score, icepool.d(sides).pool(focus), icepool.d(sides).pool(burden))
    denominator = die.denominator()
    seen = Counter({outcome: die.quantity(outcome) for outcome in die.outcomes()})
    return reference(seen, denominator)


@pytest.mark.parametrize(
    ("sides", "focus", "burden", "need", "rule", "counts"),
    [
        (8, 4, 3, 2, "revised", True),
        (10, 3, 4, -1, "revised", False),
        (12, 3, 3, 4, "classic", True),
        (6, 5, 4, 1, "classic", False),
        (6, 4, 5, 0, "revised", True),
    ],
)
def test_matches_icepool(
    sides: int, focus: int, burden: int, need: int, rule: str, counts: bool
) -> None:
    engine = {k: v for k, v in flat(sides, focus, burden, need, rule, counts).items() if v}
    assert engine == icepool_reference(sides, focus, burden, need, rule, counts)


def test_six_and_six_d12_answers_exactly() -> None:
    for need in range(-12, 13):
        odds = tribute_odds(
            sides=12, focus=6, burden=6, need=need, rule="revised", failure_counts=True
        )
        assert odds.win + odds.match + odds.fail == 1


@pytest.mark.parametrize("rule", ["revised", "classic"])
@pytest.mark.parametrize(
    ("focus", "burden", "o_focus", "o_burden"), [(1, 1, 1, 1), (2, 1, 1, 2), (2, 2, 2, 1)]
)
def test_opposed_odds_match_every_roll_of_both_sides(
    rule: str, focus: int, burden: int, o_focus: int, o_burden: int
) -> None:
    """Odds take the roll's own input: against an opponent, every face of both sides
    resolved by the rules gives the same Win, Match, Fail and Profit/Waste odds."""
    test = tribute.Test(
        reality="d4",
        rank=1,
        focus=focus,
        burden=burden,
        opponent=tribute.Opponent(rank=2, focus=o_focus, burden=o_burden),
        profit_rule=rule,  # type: ignore[arg-type]
    )
    tally: Counter[tuple[str, int, int]] = Counter()
    hands = itertools.product(range(1, 5), repeat=focus + burden + o_focus + o_burden)
    for faces in hands:
        cut = [focus, focus + burden, focus + burden + o_focus]
        groups = {
            "focus": faces[: cut[0]],
            "burden": faces[cut[0] : cut[1]],
            "opponent.focus": faces[cut[1] : cut[2]],
            "opponent.burden": faces[cut[2] :],
        }
        outcome = tribute.resolve_test(test, SuppliedDice(groups))
        chosen = outcome.actor.chosen
        tally[outcome.outcome, chosen.profit, chosen.waste] += 1
    total = sum(tally.values())
    odds = tribute_test_odds(test)
    by_odds = {
        k: Fraction(sum(n for (o, _, _), n in tally.items() if o == k), total)
        for k in ("win", "match", "fail")
    }
    assert {"win": odds.win, "match": odds.match, "fail": odds.fail} == by_odds
    joint: Counter[tuple[int, int]] = Counter()
    for (_, profit, waste), n in tally.items():
        joint[profit, waste] += n
    assert odds.joint == {k: Fraction(n, total) for k, n in sorted(joint.items())}
