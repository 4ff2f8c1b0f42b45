"""Exact FBC roll odds: brute force for small risks, icepool for larger ones."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import icepool
import pytest

from fairroll.odds.fbc import roll_odds
from fairroll.rules.fbc import Roll, adjectives_of, score_roll


def brute_force(roll: Roll) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """Every face of every die, and every chance die of every 6, scored by the rules."""
    chance = 1 <= adjectives_of(roll).slower <= 3
    successes: Counter[int] = Counter()
    pools: Counter[int] = Counter()
    for faces in itertools.product(range(1, 7), repeat=roll.risk):
        sixes = faces.count(6) if chance else 0
        weight = 6 ** (roll.risk - sixes) if chance else 1
        for chance_faces in itertools.product(range(1, 7), repeat=sixes):
            outcome = score_roll(roll, faces, chance_faces)
            successes[outcome.successes] += weight
            pools[outcome.new_pool] += weight
    total = (36 if chance else 6) ** roll.risk
    return (
        {k: Fraction(v, total) for k, v in sorted(successes.items())},
        {k: Fraction(v, total) for k, v in sorted(pools.items())},
    )


SMALL = [
    Roll(pool=10, risk=5),
    Roll(pool=2, risk=2, better=1, expensive=1),
    Roll(pool=4, risk=4, slower=2, convert=2),
    Roll(pool=3, risk=3, worse=1, cheaper=2, target=4),
    Roll(pool=6, risk=4, faster=2, target=5, convert=1),
    Roll(pool=1, risk=1, slower=1),
    Roll(pool=3, risk=3, slower=3, better=1, target=7),
    Roll(pool=4, risk=3, slower=4, cheaper=1),
]


@pytest.mark.parametrize("roll", SMALL, ids=repr)
def test_matches_brute_force_enumeration(roll: Roll) -> None:
    odds = roll_odds(roll)
    assert (odds.successes, odds.new_pool) == brute_force(roll)


def icepool_new_pool(roll: Roll) -> dict[int, Fraction]:
    die = icepool.map(
        lambda faces: score_roll(roll, faces, ()).new_pool, icepool.d6.pool(roll.risk)
    )
    return {outcome: Fraction(die.probability(outcome)) for outcome in die.outcomes()}


@pytest.mark.parametrize(
    "roll",
    [
        Roll(pool=12, risk=10, better=1, expensive=2, convert=3),
        Roll(pool=9, risk=9, faster=1, cheaper=2),
        Roll(pool=10, risk=8, worse=2, target=2),
    ],
    ids=repr,
)
def test_new_pool_matches_icepool(roll: Roll) -> None:
    assert roll_odds(roll).new_pool == icepool_new_pool(roll)


def test_successes_of_thirty_dice_are_binomial() -> None:
    # Target 3 with Better 1: a die succeeds on 2..6, p = 5/6.
    odds = roll_odds(Roll(pool=30, risk=30, better=1, slower=2))
    expected = icepool.d6.map(lambda face: int(face + 1 >= 3)).pool(30).sum()
    assert odds.successes == {k: Fraction(expected.probability(k)) for k in expected.outcomes()}
    assert sum(odds.new_pool.values()) == 1
