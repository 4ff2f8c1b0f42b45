"""Exact outcome distribution of a TFT contest, for any dice counts.

Instead of enumerating every sorted hand of each side (6188 hands a side at
twelve dice, 38 million pairs), the engine scans faces from high to low. Dice
still to be placed are uniform over the faces not yet scanned, so at face
``f`` a side with ``r`` such dice shows ``k`` of them on ``f`` in
``C(r, k)`` ways. While the sides are tied only the two counts of dice left
matter; once a side is ahead, only the dice left and the victory level so far
matter, until the loser's next die settles the level. Weights are integers,
so the result is exact.

>>> odds = contest_odds(1, 1)
>>> odds.a_wins, odds.b_wins, odds.all_dice_tied
(Fraction(5, 12), Fraction(5, 12), Fraction(1, 6))
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from math import comb

import msgspec

__all__ = ["ContestOdds", "contest_odds"]


class ContestOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Exact probabilities of a contest's results; ``levels`` maps a victory level to its odds."""

    a_wins: Fraction
    b_wins: Fraction
    all_dice_tied: Fraction
    ran_out_of_dice: Fraction
    a_levels: dict[int, Fraction]
    b_levels: dict[int, Fraction]


def contest_odds(a_dice: int, b_dice: int, sides: int = 6) -> ContestOdds:
    """Return the exact distribution of a contest of ``a_dice`` against ``b_dice`` d``sides``."""
    if a_dice < 0 or b_dice < 0:
        raise ValueError("a side rolls no negative number of dice")
    if a_dice == 0 or b_dice == 0:  # a side with no dice has run out: no victor, surely
        one = Fraction(1)
        zero = Fraction(0)
        return ContestOdds(
            a_wins=zero,
            b_wins=zero,
            all_dice_tied=zero,
            ran_out_of_dice=one,
            a_levels={},
            b_levels={},
        )
    # Tied phase: (dice left to A, dice left to B) -> ways.
    tied: dict[tuple[int, int], int] = {(a_dice, b_dice): 1}
    # Ahead phase: (winner, winner dice left, loser dice left, level) -> ways.
    ahead: dict[tuple[str, int, int, int], int] = {}
    # Finished: ("a" | "b", level) or ("all_dice_tied" | "ran_out_of_dice", 0) -> ways.
    done: defaultdict[tuple[str, int], int] = defaultdict(int)

    for face in range(sides, 0, -1):
        below = face - 1
        next_tied: defaultdict[tuple[int, int], int] = defaultdict(int)
        next_ahead: defaultdict[tuple[str, int, int, int], int] = defaultdict(int)
        for (left_a, left_b), ways in tied.items():
            for on_a in _shown_counts(left_a, face):
                ways_a = ways * comb(left_a, on_a)
                for on_b in _shown_counts(left_b, face):
                    weight = ways_a * comb(left_b, on_b)
                    rest_a, rest_b = left_a - on_a, left_b - on_b
                    if on_a == on_b:
                        if rest_a and rest_b:
                            next_tied[rest_a, rest_b] += weight
                        else:
                            reason = "ran_out_of_dice" if rest_a or rest_b else "all_dice_tied"
                            done[reason, 0] += weight * below ** (rest_a + rest_b)
                        continue
                    winner, lead = ("a", on_a - on_b) if on_a > on_b else ("b", on_b - on_a)
                    rest_w, rest_l = (rest_a, rest_b) if winner == "a" else (rest_b, rest_a)
                    if rest_l == 0:  # the side behind has no die left to compare
                        done["ran_out_of_dice", 0] += weight * below**rest_w
                    else:
                        next_ahead[winner, rest_w, rest_l, lead] += weight
        for (side, rest_w, rest_l, level), ways in ahead.items():
            # The loser shows a die on this face: the level is settled.
            done[side, level] += ways * face**rest_w * (face**rest_l - below**rest_l)
            if below == 0:
                continue
            # The loser shows nothing here; each winner die on this face adds a level.
            for on_w in range(rest_w + 1):
                next_ahead[side, rest_w - on_w, rest_l, level + on_w] += ways * comb(rest_w, on_w)
        tied, ahead = next_tied, next_ahead

    total = sides ** (a_dice + b_dice)
    a_levels = {level: Fraction(w, total) for (s, level), w in sorted(done.items()) if s == "a"}
    b_levels = {level: Fraction(w, total) for (s, level), w in sorted(done.items()) if s == "b"}
    return ContestOdds(
        a_wins=sum(a_levels.values(), Fraction(0)),
        b_wins=sum(b_levels.values(), Fraction(0)),
        all_dice_tied=Fraction(done["all_dice_tied", 0], total),
        ran_out_of_dice=Fraction(done["ran_out_of_dice", 0], total),
        a_levels=a_levels,
        b_levels=b_levels,
    )


def _shown_counts(left: int, face: int) -> range:
    """How many of ``left`` dice (all showing 1..face) can show ``face``: all of them at 1."""
    return range(left, left + 1) if face == 1 else range(left + 1)
