"""Exact odds of Stat + Skill checks: a simple check, and how long a complex check takes.

A simple check has 100 equally likely rolls; each is scored by the rules. A
complex check is a Markov chain over (successes so far, fate dice left): each
period moves it by one of a handful of steps whose weights come from those 100
rolls. Weights stay integers (out of 100 per period), so the answer is exact.

>>> from fairroll.rules.stat_skill import Check
>>> odds = check_odds(Check(stat=5, skill=5, tn=10))
>>> odds.full_success, odds.threat
(Fraction(9, 25), Fraction(1, 10))
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache

import msgspec

from fairroll.rules.stat_skill import (
    DIE,
    Check,
    ComplexCheck,
    ContestedCheck,
    pair_winner,
    progress,
    score_check,
    score_contest,
)

__all__ = ["CheckOdds", "ComplexOdds", "ContestOdds", "check_odds", "complex_odds", "contest_odds"]

ROLLS = DIE * DIE


class CheckOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Probabilities of each result, of a threat, and of each final result."""

    failure: Fraction
    partial_stat_short: Fraction
    partial_skill_short: Fraction
    full_success: Fraction
    threat: Fraction
    final: dict[str, Fraction]


class ComplexOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Probability of completing in exactly n periods (n = 1..cap), and of not within the cap."""

    completed_in: dict[int, Fraction]
    within_cap: Fraction
    not_within_cap: Fraction


class ContestOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Who wins each pair (a, b or standoff) and each side's final result."""

    stat_winner: dict[str, Fraction]
    skill_winner: dict[str, Fraction]
    a_final: dict[str, Fraction]
    b_final: dict[str, Fraction]


def check_odds(check: Check) -> CheckOdds:
    """Exact odds of a simple check, threats activated by its policy and fate dice."""
    results: Counter[tuple[str, str | None]] = Counter()
    finals: Counter[str] = Counter()
    threats = 0
    for stat_die in range(1, DIE + 1):
        for skill_die in range(1, DIE + 1):
            outcome = score_check(check, stat_die, skill_die, check.fate_dice)
            results[outcome.result, outcome.short] += 1
            finals[outcome.final] += 1
            threats += outcome.threat
    return CheckOdds(
        failure=Fraction(results["failure", None], ROLLS),
        partial_stat_short=Fraction(results["partial_success", "stat"], ROLLS),
        partial_skill_short=Fraction(results["partial_success", "skill"], ROLLS),
        full_success=Fraction(results["full_success", None], ROLLS),
        threat=Fraction(threats, ROLLS),
        final={name: Fraction(n, ROLLS) for name, n in sorted(finals.items())},
    )


def complex_odds(check: ComplexCheck) -> ComplexOdds:
    """Exact distribution of the period in which the complex check completes."""
    need = check.required_successes
    # fate dice left -> ways to stand at each total 0..need-1 (out of ROLLS**period).
    states: dict[int, list[int]] = {check.fate_dice: [1] + [0] * (need - 1)}
    completed: dict[int, Fraction] = {}
    for period in range(1, check.max_periods + 1):
        nxt: dict[int, list[int]] = {}
        finished = 0
        for fate, ways in states.items():
            reaching = sum(ways)
            if not reaching:
                continue
            for (gained, reset, fate_after), weight in _steps(check, fate).items():
                target = nxt.setdefault(fate_after, [0] * need)
                if reset:
                    target[0] += reaching * weight
                elif gained >= need:
                    finished += reaching * weight
                else:
                    stay = need - gained
                    target[gained:] = [
                        t + w * weight for t, w in zip(target[gained:], ways[:stay], strict=True)
                    ]
                    finished += sum(ways[stay:]) * weight
        completed[period] = Fraction(finished, ROLLS**period)
        states = nxt
    within = sum(completed.values(), Fraction(0))
    return ComplexOdds(
        completed_in={p: f for p, f in completed.items() if f},
        within_cap=within,
        not_within_cap=1 - within,
    )


def _steps(check: ComplexCheck, fate: int) -> dict[tuple[int, bool, int], int]:
    return _steps_cached(
        check.stat + check.stat_trick,
        check.skill + check.skill_trick,
        check.tn,
        check.activate_threat,
        check.fate_per_critical,
        fate,
    )


@cache
def _steps_cached(
    stat: int, skill: int, tn: int, policy: str, per_critical: int, fate: int
) -> dict[tuple[int, bool, int], int]:
    """One period from a state with ``fate`` dice: (gained, reset, fate after) -> rolls of 100."""
    simple = Check(stat=stat, skill=skill, tn=tn, activate_threat=policy)  # type: ignore[arg-type]
    steps: Counter[tuple[int, bool, int]] = Counter()
    for stat_die in range(1, DIE + 1):
        for skill_die in range(1, DIE + 1):
            outcome = score_check(simple, stat_die, skill_die, fate)
            steps[progress(outcome, per_critical)] += 1
    return dict(steps)


def contest_odds(contest: ContestedCheck) -> ContestOdds:
    """Exact odds of a contested check over its 10,000 equally likely rolls.

    A roll's outcome depends only on who wins each pair and on each side's threat
    (its two dice equal). The rolls are counted by that key; each key is scored by the
    rules once, on one of its rolls.
    """
    a, b = contest.a, contest.b
    faces = range(1, DIE + 1)

    def pair(a_total: int, b_total: int, a_rating: int, b_rating: int) -> str:
        return pair_winner(a_total, b_total, a_rating, b_rating, contest.tie_break)

    stat = {
        (x, y): pair(a.stat + x + a.stat_trick, b.stat + y + b.stat_trick, a.stat, b.stat)
        for x in faces
        for y in faces
    }
    skill = {
        (x, y): pair(a.skill + x + a.skill_trick, b.skill + y + b.skill_trick, a.skill, b.skill)
        for x in faces
        for y in faces
    }
    keys: Counter[tuple[str, str, bool, bool]] = Counter()
    example: dict[tuple[str, str, bool, bool], tuple[int, int, int, int]] = {}
    for (a_stat, b_stat), stat_won in stat.items():
        for (a_skill, b_skill), skill_won in skill.items():
            key = (stat_won, skill_won, a_stat == a_skill, b_stat == b_skill)
            keys[key] += 1
            example.setdefault(key, (a_stat, a_skill, b_stat, b_skill))
    counts: dict[str, Counter[str]] = {name: Counter() for name in ("stat", "skill", "a", "b")}
    for key, n in keys.items():
        outcome = score_contest(contest, *example[key])
        counts["stat"][outcome.stat_winner] += n
        counts["skill"][outcome.skill_winner] += n
        counts["a"][outcome.a.final] += n
        counts["b"][outcome.b.final] += n
    rolls = ROLLS * ROLLS

    def odds(name: str) -> dict[str, Fraction]:
        return {k: Fraction(n, rolls) for k, n in sorted(counts[name].items())}

    return ContestOdds(
        stat_winner=odds("stat"), skill_winner=odds("skill"), a_final=odds("a"), b_final=odds("b")
    )
