"""Exact distribution of successes and of the new pool for a Faster, Better, Cheaper roll.

Every risked die lands in one of a few *kinds*, by what it does: lost from the
pool or kept, a success or not, a natural 6 that adds dice or not (with
Slower, a natural 6 splits by its chance die). Dice are independent, so the
counts of each kind follow a multinomial law; faces of the same kind are
merged, leaving at most four kinds, so even 30 dice mean at most 5456 count
vectors, each scored exactly as the rules score a roll.

>>> from fairroll.rules.fbc import Roll
>>> odds = roll_odds(Roll(pool=10, risk=1))
>>> odds.successes
{0: Fraction(1, 3), 1: Fraction(2, 3)}
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from math import comb

import msgspec

from fairroll.rules.fbc import (
    Adjectives,
    Conflict,
    Roll,
    adjectives_of,
    chance_threshold,
    check_conflict,
    check_risk,
    participant_roll,
)

__all__ = ["RollOdds", "conflict_odds", "roll_odds"]


class RollOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Exact probabilities of each number of successes and of each new pool size."""

    successes: dict[int, Fraction]
    new_pool: dict[int, Fraction]


# A die's effect: (lost from the pool, success, kept success, dice added by a natural 6).
_Kind = tuple[int, int, int, int]


def conflict_odds(conflict: Conflict) -> tuple[RollOdds, ...]:
    """Each participant's own roll, exactly, once the conflict is one the rules accept.

    Who narrates when follows from all the rolls together (and tie dice): not computed.
    """
    check_conflict(conflict)
    return tuple(roll_odds(participant_roll(p)) for p in conflict.participants)


def roll_odds(roll: Roll) -> RollOdds:
    """The exact odds of ``roll`` (risk up to 30 dice), Slower's chance dice included."""
    check_risk(roll)
    adjectives = adjectives_of(roll)
    kinds = _kinds(roll.target, adjectives)
    effects = list(kinds)
    n = roll.risk
    # weighted[i][c]: the ways c dice of the n still unplaced fall in kind i: C(n, c) * w**c.
    powers = [[weight**c for c in range(n + 1)] for weight in kinds.values()]
    successes: defaultdict[int, int] = defaultdict(int)
    pools: defaultdict[int, int] = defaultdict(int)
    last = len(effects) - 1

    def place(
        kind: int, left: int, lost: int, hits: int, kept: int, gained: int, ways: int
    ) -> None:
        lost_e, hit_e, kept_e, gain_e = effects[kind]
        if kind == last:
            ways *= powers[kind][left]
            lost += left * lost_e
            hits += left * hit_e
            kept += left * kept_e
            gained += left * gain_e
            pool = (
                roll.pool
                - lost
                + min(adjectives.cheaper, lost)
                - min(adjectives.expensive, kept)
                + gained
                + min(roll.convert, max(hits - 1, 0))
            )
            successes[hits] += ways
            pools[max(pool, 1)] += ways
            return
        row = powers[kind]
        for count in range(left + 1):
            place(
                kind + 1,
                left - count,
                lost + count * lost_e,
                hits + count * hit_e,
                kept + count * kept_e,
                gained + count * gain_e,
                ways * comb(left, count) * row[count],
            )

    place(0, n, 0, 0, 0, 0, 1)
    total = sum(kinds.values()) ** n
    return RollOdds(
        successes={k: Fraction(w, total) for k, w in sorted(successes.items())},
        new_pool={k: Fraction(w, total) for k, w in sorted(pools.items())},
    )


def _kinds(target: int, adjectives: Adjectives) -> dict[_Kind, int]:
    """Merge the faces (and chance faces) of one die by their effect, with integer weights."""
    shift = adjectives.better - adjectives.worse
    threshold = chance_threshold(adjectives.slower)
    chance = 1 <= adjectives.slower <= 3
    scale = 6 if chance else 1  # with chance dice, each outcome is one of 36
    kinds: defaultdict[_Kind, int] = defaultdict(int)
    for face in range(1, 7):
        lost = int(face < target)
        success = int(face + shift >= target)
        kept_success = success * (1 - lost)
        if face != 6 or adjectives.slower >= 4:
            kinds[lost, success, kept_success, 0] += scale
        elif not chance:
            kinds[lost, success, kept_success, 1 + adjectives.faster] += scale
        else:
            kinds[lost, success, kept_success, 1] += threshold
            kinds[lost, success, kept_success, 0] += 6 - threshold
    return dict(kinds)
