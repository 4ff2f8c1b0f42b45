"""Exact odds of a Tribute Test, against a difficulty or an opponent, under either rule.

Brute force over 6 FOCUS and 6 BURDEN d12 is 12**12 rolls, and even over sorted
hands it is 153 million pairs. This engine never looks at a whole hand.

**Revised rule.** A Win is possible exactly when max FOCUS - min BURDEN beats
the need. Then the service's choice is, over FOCUS values ``f``, the best of
``P(f) - W(b)`` where ``b`` is the highest BURDEN die with ``f - b >= t``
(``t = need + 1``), ``P(f)`` the FOCUS dice above ``f`` and ``W(b)`` the
BURDEN dice above ``b``. Shift every BURDEN die up by ``t`` and scan one axis
from low to high, placing at each position the FOCUS dice that show it and the
shifted BURDEN dice that land on it: at a FOCUS position, the BURDEN dice
placed so far are exactly those ``<= f - t``, ``P`` is the number of FOCUS dice
not placed yet and ``W`` the number of BURDEN dice not placed yet. The state is
(FOCUS left, BURDEN left, best (P - W, P) so far): a few hundred states.

Without a Win the choice is forced: a Match uses max FOCUS and min BURDEN
(Profit 0, Waste = BURDEN dice above the lowest), a Fail with Option 1a uses
min FOCUS and max BURDEN (Profit = FOCUS dice above the lowest, Waste 0), and
those depend on each pool alone, in closed form.

**Classic rule.** Scan faces high to low until both pools' highest dice are
seen; Profit and Waste are then known and the rest of the dice are free.

**Against an opponent.** The actor chooses against the opposition's best Result
(revised rule: max FOCUS - min BURDEN; classic: max FOCUS - max BURDEN), which
depends on the opponent's dice alone: the odds are those against each possible
need, weighted by its probability (a difference of two order statistics).

>>> odds = tribute_odds(sides=6, focus=1, burden=1, need=0, rule="revised", failure_counts=False)
>>> odds.win, odds.match, odds.fail
(Fraction(5, 12), Fraction(1, 6), Fraction(5, 12))
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from functools import lru_cache
from math import comb

import msgspec
from msgspec import UnsetType

from fairroll.rules.tribute import REALITY_SIDES, Test, counts_failures

__all__ = ["TributeOdds", "tribute_odds", "tribute_test_odds"]

_Best = tuple[int, int] | None  # (Profit - Waste, Profit) of the best Win choice so far
# (FOCUS left, BURDEN left, top FOCUS, top BURDEN, Waste, Profit); 0 for a top not seen yet.
_ClassicState = tuple[int, int, int, int, int, int]


class TributeOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Exact probabilities of Win, Match and Fail, and of the Profit and Waste counted."""

    win: Fraction
    match: Fraction
    fail: Fraction
    joint: dict[tuple[int, int], Fraction]  # (profit, waste) -> probability

    def profit(self) -> dict[int, Fraction]:
        return _marginal(self.joint, 0)

    def waste(self) -> dict[int, Fraction]:
        return _marginal(self.joint, 1)


def tribute_test_odds(test: Test) -> TributeOdds:
    """The odds of ``test`` as a roll resolves it, against its difficulty or its opponent."""
    sides = REALITY_SIDES[test.reality]
    counts = counts_failures(test)
    opponent = test.opponent
    if isinstance(opponent, UnsetType):
        difficulty = test.difficulty if isinstance(test.difficulty, int) else 0
        return _cached(
            sides, test.focus, test.burden, difficulty - test.rank, test.profit_rule, counts
        )
    win = match = fail = Fraction(0)
    joint: defaultdict[tuple[int, int], Fraction] = defaultdict(Fraction)
    parts = _opposition(sides, opponent.focus, opponent.burden, test.profit_rule == "classic")
    for part, chance in parts.items():
        need = opponent.rank + part - test.rank
        odds = _cached(sides, test.focus, test.burden, need, test.profit_rule, counts)
        win += chance * odds.win
        match += chance * odds.match
        fail += chance * odds.fail
        for key, p in odds.joint.items():
            joint[key] += chance * p
    return TributeOdds(win=win, match=match, fail=fail, joint={k: joint[k] for k in sorted(joint)})


def _opposition(sides: int, focus: int, burden: int, classic: bool) -> dict[int, Fraction]:
    """The opposition's best dice part: max FOCUS - (max BURDEN if classic else min BURDEN)."""
    top = _extreme(sides, focus, highest=True)
    low = _extreme(sides, burden, highest=classic)
    parts: defaultdict[int, Fraction] = defaultdict(Fraction)
    for f, pf in top.items():
        for b, pb in low.items():
            parts[f - b] += pf * pb
    return dict(parts)


def _extreme(sides: int, n: int, *, highest: bool) -> dict[int, Fraction]:
    """The distribution of the highest (or lowest) of ``n`` d``sides``."""
    total = sides**n
    if highest:
        return {m: Fraction(m**n - (m - 1) ** n, total) for m in range(1, sides + 1)}
    return {
        m: Fraction((sides - m + 1) ** n - (sides - m) ** n, total) for m in range(1, sides + 1)
    }


@lru_cache(maxsize=4096)
def _cached(
    sides: int, focus: int, burden: int, need: int, rule: str, failure_counts: bool
) -> TributeOdds:
    return tribute_odds(
        sides=sides, focus=focus, burden=burden, need=need, rule=rule, failure_counts=failure_counts
    )


def tribute_odds(
    *, sides: int, focus: int, burden: int, need: int, rule: str, failure_counts: bool
) -> TributeOdds:
    """Odds of a Test whose dice part (FOCUS - BURDEN) must reach ``need`` to Match."""
    outcomes: defaultdict[tuple[str, int, int], int] = defaultdict(int)
    if rule == "classic":
        _classic(outcomes, sides, focus, burden, need, failure_counts)
    else:
        _revised_wins(outcomes, sides, focus, burden, need)
        _revised_others(outcomes, sides, focus, burden, need, failure_counts)
    total = sides ** (focus + burden)
    by_outcome: defaultdict[str, int] = defaultdict(int)
    joint: defaultdict[tuple[int, int], int] = defaultdict(int)
    for (outcome, profit, waste), ways in outcomes.items():
        by_outcome[outcome] += ways
        joint[profit, waste] += ways
    return TributeOdds(
        win=Fraction(by_outcome["win"], total),
        match=Fraction(by_outcome["match"], total),
        fail=Fraction(by_outcome["fail"], total),
        joint={key: Fraction(ways, total) for key, ways in sorted(joint.items())},
    )


def _revised_wins(
    outcomes: defaultdict[tuple[str, int, int], int], sides: int, n_f: int, n_b: int, need: int
) -> None:
    t = max(need + 1, 1 - sides)  # below 1 - sides every choice Wins: the same as 1 - sides
    if t > sides - 1:
        return  # even max FOCUS against min BURDEN cannot Win
    states: dict[tuple[int, int, _Best], int] = {(n_f, n_b, None): 1}
    for x in range(min(1, 1 + t), max(sides, sides + t) + 1):
        f_here, f_last = 1 <= x <= sides, x == sides
        b_here, b_last = 1 <= x - t <= sides, x - t == sides
        # Half-step 1: FOCUS dice on x (remember whether any landed here).
        half: defaultdict[tuple[int, int, _Best, bool], int] = defaultdict(int)
        for (left_f, left_b, best), ways in states.items():
            for on_f in _placed(left_f, f_here, f_last):
                half[left_f - on_f, left_b, best, on_f > 0] += ways * comb(left_f, on_f)
        # Half-step 2: shifted BURDEN dice on x, then score a FOCUS die here against them.
        nxt: defaultdict[tuple[int, int, _Best], int] = defaultdict(int)
        for (rest_f, left_b, best, focus_here), ways in half.items():
            for on_b in _placed(left_b, b_here, b_last):
                rest_b = left_b - on_b
                new_best = best
                if focus_here and rest_b < n_b:  # a BURDEN die at or below x - t exists
                    candidate = (rest_f - rest_b, rest_f)
                    if new_best is None or candidate > new_best:
                        new_best = candidate
                nxt[rest_f, rest_b, new_best] += ways * comb(left_b, on_b)
        states = nxt
    for (_, _, best), ways in states.items():
        if best is not None:
            net, profit = best
            outcomes["win", profit, profit - net] += ways


def _placed(left: int, here: bool, last: bool) -> range:
    """How many of ``left`` unplaced dice may show this position (all of them at the last)."""
    if not here:
        return range(1)
    if last:
        return range(left, left + 1)
    return range(left + 1)


def _revised_others(
    outcomes: defaultdict[tuple[str, int, int], int],
    sides: int,
    n_f: int,
    n_b: int,
    need: int,
    failure_counts: bool,
) -> None:
    # FOCUS: (highest, how many show the lowest) -> ways; BURDEN: (lowest, how many) -> ways.
    focus: defaultdict[tuple[int, int], int] = defaultdict(int)
    for low in range(1, sides + 1):
        focus[low, n_f] += 1  # every die on the same face
        for count in range(1, n_f):
            rest = n_f - count
            for high in range(low + 1, sides + 1):
                ways = comb(n_f, count) * ((high - low) ** rest - (high - low - 1) ** rest)
                focus[high, count] += ways
    # BURDEN: ways by (lowest, how many show it), and ways with the lowest above each face.
    burden = {
        (low, count): comb(n_b, count) * (sides - low) ** (n_b - count)
        for low in range(1, sides + 1)
        for count in range(1, n_b + 1)
    }
    lowest_above = [(sides - face) ** n_b for face in range(sides + 1)]
    for (high, low_count), ways_f in focus.items():
        match_low = high - need  # best = high - low must equal need
        if 1 <= match_low <= sides:  # forced: max FOCUS, min BURDEN
            for count in range(1, n_b + 1):
                outcomes["match", 0, n_b - count] += ways_f * burden[match_low, count]
        # A Fail: every BURDEN die above high - need.
        fail_ways = ways_f * lowest_above[min(max(high - need, 0), sides)]
        if failure_counts:  # best Profit - Waste: min FOCUS, max BURDEN
            outcomes["fail", n_f - low_count, 0] += fail_ways
        else:
            outcomes["fail", 0, 0] += fail_ways


def _classic(
    outcomes: defaultdict[tuple[str, int, int], int],
    sides: int,
    n_f: int,
    n_b: int,
    need: int,
    failure_counts: bool,
) -> None:
    # Scanning faces down until both highest dice are seen.
    states: dict[_ClassicState, int] = {(n_f, n_b, 0, 0, 0, 0): 1}
    for face in range(sides, 0, -1):
        # Half-step 1: FOCUS dice on this face.
        half: defaultdict[_ClassicState, int] = defaultdict(int)
        for (left_f, left_b, top_f, top_b, waste, profit), ways in states.items():
            for on_f in range(left_f, left_f + 1) if face == 1 else range(left_f + 1):
                new_top_f = face if not top_f and on_f else top_f
                half[left_f - on_f, left_b, new_top_f, top_b, waste, profit] += ways * comb(
                    left_f, on_f
                )
        # Half-step 2: BURDEN dice on this face; score the tops first seen here.
        nxt: defaultdict[_ClassicState, int] = defaultdict(int)
        for (rest_f, left_b, top_f, top_b, waste, profit), ways in half.items():
            for on_b in range(left_b, left_b + 1) if face == 1 else range(left_b + 1):
                weight = ways * comb(left_b, on_b)
                rest_b = left_b - on_b
                new_top_b, new_w, new_p = top_b, waste, profit
                if top_f == face:
                    # "Any BURDEN dice other than the first one that meet or exceed the
                    #  highest FOCUS die are considered Waste."
                    new_w = max(0, n_b - rest_b - 1)
                if not top_b and on_b:
                    new_top_b, new_p = face, max(0, n_f - rest_f - 1)
                if top_f and new_top_b:
                    diff = top_f - new_top_b
                    outcome = "win" if diff > need else "match" if diff == need else "fail"
                    counted = outcome != "fail" or failure_counts
                    key = (outcome, new_p if counted else 0, new_w if counted else 0)
                    outcomes[key] += weight * (face - 1) ** (rest_f + rest_b)
                else:
                    nxt[rest_f, rest_b, top_f, new_top_b, new_w, new_p] += weight
        states = nxt


def _marginal(joint: dict[tuple[int, int], Fraction], axis: int) -> dict[int, Fraction]:
    out: defaultdict[int, Fraction] = defaultdict(Fraction)
    for key, p in joint.items():
        out[key[axis]] += p
    return dict(sorted(out.items()))
