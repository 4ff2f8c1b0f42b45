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
    n = roll.risk
    total = sum(kinds.values()) ** n
    # Successes alone: each die succeeds or not, so their count is binomial.
    hit = sum(w for (_, success, _, _), w in kinds.items() if success)
    miss = sum(kinds.values()) - hit
    successes = {k: comb(n, k) * hit**k * miss ** (n - k) for k in range(n + 1)}
    # The new pool: every count vector of the (at most four) kinds, as nested loops. What
    # a vector adds to the pool is read from tables built once (each capped rule -
    # Cheaper, Expensive, converting extra successes - a lookup, not a min()).
    effects = list(kinds.items()) + [((0, 0, 0, 0), 0)] * (4 - len(kinds))
    (e0, w0), (e1, w1), (e2, w2), (e3, w3) = effects
    lost_part = [min(adjectives.cheaper, lost) - lost for lost in range(n + 1)]
    kept_part = [-min(adjectives.expensive, kept) for kept in range(n + 1)]
    hits_part = [min(roll.convert, max(hits - 1, 0)) for hits in range(n + 1)]
    pools: defaultdict[int, int] = defaultdict(int)
    binomial = [[comb(m, c) for c in range(m + 1)] for m in range(n + 1)]
    p0 = [w0**c for c in range(n + 1)]
    p1 = [w1**c for c in range(n + 1)]
    p2 = [w2**c for c in range(n + 1)]
    p3 = [w3**c for c in range(n + 1)]
    base = roll.pool
    for c0 in range(n + 1 if w0 else 1):
        ways0 = binomial[n][c0] * p0[c0]
        left0 = n - c0
        for c1 in range(left0 + 1 if w1 else 1):
            ways1 = ways0 * binomial[left0][c1] * p1[c1]
            left1 = left0 - c1
            lost1 = c0 * e0[0] + c1 * e1[0]
            hits1 = c0 * e0[1] + c1 * e1[1]
            kept1 = c0 * e0[2] + c1 * e1[2]
            gained1 = c0 * e0[3] + c1 * e1[3]
            row = binomial[left1]
            for c2 in range(left1 + 1 if w2 else 1):
                c3 = left1 - c2
                if c3 and not w3:
                    continue
                lost = lost1 + c2 * e2[0] + c3 * e3[0]
                hits = hits1 + c2 * e2[1] + c3 * e3[1]
                kept = kept1 + c2 * e2[2] + c3 * e3[2]
                gained = gained1 + c2 * e2[3] + c3 * e3[3]
                pool = base + lost_part[lost] + kept_part[kept] + gained + hits_part[hits]
                pools[pool if pool > 1 else 1] += ways1 * row[c2] * p2[c2] * p3[c3]
    return RollOdds(
        successes={k: Fraction(w, total) for k, w in sorted(successes.items()) if w},
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
