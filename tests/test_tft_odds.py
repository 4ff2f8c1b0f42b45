"""Exact TFT contest odds: brute force on small cases, icepool (the oracle) on larger ones."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from typing import Any

import icepool
import pytest

from fairroll.odds.tft import ContestOdds, contest_odds
from fairroll.rules.tft import compare_faces


def flat(odds: ContestOdds) -> dict[tuple[str, int], Fraction]:
    table = {("a", level): p for level, p in odds.a_levels.items()}
    table |= {("b", level): p for level, p in odds.b_levels.items()}
    table["all_dice_tied", 0] = odds.all_dice_tied
    table["ran_out_of_dice", 0] = odds.ran_out_of_dice
    return {key: p for key, p in table.items() if p}


def brute_force(a_dice: int, b_dice: int) -> dict[tuple[str, int], Fraction]:
    counts: Counter[tuple[str, int]] = Counter()
    for a in itertools.product(range(1, 7), repeat=a_dice):
        for b in itertools.product(range(1, 7), repeat=b_dice):
            result = compare_faces(a, b)
            key = result.victor or result.no_victor_reason
            assert key is not None
            counts[key, result.victory_level or 0] += 1
    total = 6 ** (a_dice + b_dice)
    return {key: Fraction(n, total) for key, n in counts.items()}


class ContestEvaluator(icepool.MultisetEvaluator):  # type: ignore[misc]
    """The contest written as an icepool evaluator: outcomes seen from 6 down to 1."""

    def next_state(self, state: Any, order: Any, outcome: int, a: int, b: int) -> Any:
        if order != icepool.Order.Descending:
            raise icepool.UnsupportedOrder
        phase = state or ("tied",)
        if phase[0] == "tied":
            if a == b:
                return phase
            return ("ahead", "a", a - b) if a > b else ("ahead", "b", b - a)
        if phase[0] == "ahead":
            _, side, level = phase
            winner, loser = (a, b) if side == "a" else (b, a)
            return ("won", side, level) if loser else ("ahead", side, level + winner)
        return phase

    def final_outcome(self, final_state: Any, *args: Any, **kwargs: Any) -> Any:
        phase = final_state or ("tied",)
        if phase[0] == "tied":
            return ("all_dice_tied", 0)
        if phase[0] == "ahead":  # the side behind ran out of dice after the ties
            return ("ran_out_of_dice", 0)
        return (phase[1], phase[2])


def icepool_odds(a_dice: int, b_dice: int) -> dict[tuple[str, int], Fraction]:
    die = ContestEvaluator().evaluate(icepool.d6.pool(a_dice), icepool.d6.pool(b_dice))
    return {outcome: Fraction(die.probability(outcome)) for outcome in die.outcomes()}


@pytest.mark.parametrize(
    ("a_dice", "b_dice"), [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (1, 4), (3, 2), (3, 3)]
)
def test_matches_brute_force_enumeration(a_dice: int, b_dice: int) -> None:
    assert flat(contest_odds(a_dice, b_dice)) == brute_force(a_dice, b_dice)


@pytest.mark.parametrize(("a_dice", "b_dice"), [(7, 4), (4, 5), (12, 9), (6, 6)])
def test_matches_icepool(a_dice: int, b_dice: int) -> None:
    assert flat(contest_odds(a_dice, b_dice)) == icepool_odds(a_dice, b_dice)


@pytest.mark.parametrize(("a_dice", "b_dice"), [(1, 1), (7, 4), (12, 12), (24, 24), (24, 1)])
def test_probabilities_sum_to_one(a_dice: int, b_dice: int) -> None:
    assert sum(flat(contest_odds(a_dice, b_dice)).values()) == 1


def test_equal_dice_are_a_fair_contest() -> None:
    odds = contest_odds(5, 5)
    assert odds.a_wins == odds.b_wins
    assert odds.ran_out_of_dice == 0


def test_roth_is_favoured_but_not_certain() -> None:
    # "We would like the player with the higher attribute total to have an advantage
    #  but not an auto victory."
    odds = contest_odds(7, 4)
    assert Fraction(1, 2) < odds.a_wins < 1
    assert odds.b_wins > 0
    assert odds.all_dice_tied == 0  # unequal hands can never tie all dice
