"""TFT contest odds: fairroll's exact engine against icepool (the reference) on the same cases.

Run: python benchmarks/tft_odds.py
Prints the median time of each engine per case and the ratio icepool / fairroll.
Both are exact; the script checks they agree before timing.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import icepool

from fairroll.odds.tft import contest_odds
from test_tft_odds import ContestEvaluator, flat

CASES = [(3, 3), (7, 4), (10, 10), (12, 12)]


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def icepool_case(a: int, b: int) -> dict[tuple[str, int], Fraction]:
    # A fresh evaluator and fresh pools each call, so icepool's caches do not carry over.
    die = ContestEvaluator().evaluate(icepool.d6.pool(a), icepool.d6.pool(b))
    return {outcome: Fraction(die.probability(outcome)) for outcome in die.outcomes()}


def main() -> None:
    print(f"{'case':>8} {'fairroll ms':>12} {'icepool ms':>11} {'icepool/fairroll':>17}")
    for a, b in CASES:
        if flat(contest_odds(a, b)) != icepool_case(a, b):
            raise SystemExit(f"engines disagree on {a}v{b}")
        ours = median_seconds(lambda a=a, b=b: contest_odds(a, b), 21)
        theirs = median_seconds(lambda a=a, b=b: icepool_case(a, b), 5)
        print(f"{a:>3}v{b:<4} {ours * 1e3:12.2f} {theirs * 1e3:11.1f} {theirs / ours:16.0f}x")
    worst = max(
        median_seconds(lambda a=a, b=b: contest_odds(a, b), 5)
        for a in range(1, 25)
        for b in range(1, 25)
        if a + b >= 46
    )
    print(f"worst supported case (up to 24v24): {worst * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
