"""Tribute Test odds: the worst case over every input, and icepool on the same cases.

Run: python benchmarks/tribute_odds.py
Every reality level, 1..6 FOCUS x 1..6 BURDEN dice, every need that is not
trivially decided, both rules, with and without Option 1a: each answered by
fairroll's engine (cold: no cache), timed, and the worst printed. Then three
cases against icepool (which enumerates sorted hand pairs with the same
choice function), with the ratio.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import icepool

from fairroll.odds.tribute import tribute_odds
from fairroll.rules.tribute import best_choice


def seconds(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def icepool_case(sides: int, focus: int, burden: int, need: int, rule: str) -> Any:
    def score(f: tuple[int, ...], b: tuple[int, ...]) -> tuple[str, int, int]:
        c = best_choice(f, b, need=need, rule=rule, failure_counts=True)
        return (c.outcome, c.profit, c.waste)

    return icepool.map(score, icepool.d(sides).pool(focus), icepool.d(sides).pool(burden))


def main() -> None:
    worst, worst_case, count, total = 0.0, (), 0, 0.0
    for sides in (4, 6, 8, 10, 12):
        for focus in range(1, 7):
            for burden in range(1, 7):
                for need in range(-sides, sides + 1):
                    for rule in ("revised", "classic"):
                        for counts in (False, True):
                            took = seconds(
                                tribute_odds,
                                sides=sides,
                                focus=focus,
                                burden=burden,
                                need=need,
                                rule=rule,
                                failure_counts=counts,
                            )
                            count += 1
                            total += took
                            if took > worst:
                                worst, worst_case = took, (sides, focus, burden, need, rule)
    print(f"{count} inputs, mean {total / count * 1e3:.2f} ms, worst {worst * 1e3:.1f} ms")
    print(f"worst case (sides, focus, burden, need, rule): {worst_case}")
    print(f"{'case':>24} {'fairroll ms':>12} {'icepool ms':>11} {'ratio':>7}")
    for sides, focus, burden, need in ((6, 3, 3, 1), (8, 4, 3, 2), (10, 4, 4, 0)):
        ours = seconds(
            tribute_odds,
            sides=sides,
            focus=focus,
            burden=burden,
            need=need,
            rule="revised",
            failure_counts=True,
        )
        theirs = seconds(icepool_case, sides, focus, burden, need, "revised")
        label = f"d{sides} {focus}+{burden} need {need}"
        print(f"{label:>24} {ours * 1e3:12.2f} {theirs * 1e3:11.1f} {theirs / ours:6.0f}x")


if __name__ == "__main__":
    main()
