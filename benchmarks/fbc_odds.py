"""FBC roll odds: fairroll's exact engine against icepool on the same cases, and the worst case.

Run: python benchmarks/fbc_odds.py
icepool enumerates the roll's multisets and scores each with the same rules
function; fairroll merges faces into kinds and enumerates their counts.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import icepool

from fairroll.odds.fbc import roll_odds
from fairroll.rules.fbc import Roll, score_roll

CASES = [
    Roll(pool=10, risk=5),
    Roll(pool=12, risk=10, better=1, expensive=2, convert=3),
    Roll(pool=14, risk=14, faster=1, cheaper=2),
]


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def icepool_new_pool(roll: Roll) -> dict[int, Fraction]:
    die = icepool.map(
        lambda faces: score_roll(roll, faces, ()).new_pool, icepool.d6.pool(roll.risk)
    )
    return {outcome: Fraction(die.probability(outcome)) for outcome in die.outcomes()}


def main() -> None:
    print(f"{'case':>44} {'fairroll ms':>12} {'icepool ms':>11} {'ratio':>7}")
    for roll in CASES:
        if roll_odds(roll).new_pool != icepool_new_pool(roll):
            raise SystemExit(f"engines disagree on {roll}")
        ours = median_seconds(lambda roll=roll: roll_odds(roll), 11)
        theirs = median_seconds(lambda roll=roll: icepool_new_pool(roll), 3)
        label = f"risk {roll.risk} b{roll.better} f{roll.faster} c{roll.cheaper} e{roll.expensive}"
        print(f"{label:>44} {ours * 1e3:12.2f} {theirs * 1e3:11.1f} {theirs / ours:6.0f}x")
    worst, worst_roll = 0.0, None
    for target, shift, slower, money in itertools.product(
        range(1, 13), range(-3, 4), range(5), ("cheaper", "expensive")
    ):
        if shift > 0 and slower:
            continue
        roll = Roll(
            pool=30,
            risk=30,
            target=target,
            better=max(shift, 0),
            worse=max(-shift, 0),
            slower=slower,
            faster=0 if slower else 1,
            convert=2,
            **{money: 2},
        )
        seconds = median_seconds(lambda roll=roll: roll_odds(roll), 3)
        if seconds > worst:
            worst, worst_roll = seconds, roll
    print(f"worst over {12 * 7 * 5 * 2} 30-dice inputs: {worst * 1e3:.1f} ms ({worst_roll})")


if __name__ == "__main__":
    main()
