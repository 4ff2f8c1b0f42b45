"""Stat + Skill complex-check odds: the worst case over a grid of the supported inputs.

Run: python benchmarks/stat_skill_odds.py
The largest complex check (30 successes, 60 periods, 10 fate dice) at every TN,
several ratings, each policy and fate spend, timed cold (caches cleared).
"""

from __future__ import annotations

import itertools
import time

from fairroll.odds import stat_skill as odds
from fairroll.rules.stat_skill import ComplexCheck


def main() -> None:
    worst, worst_case, count = 0.0, None, 0
    for stat, tn, per, policy in itertools.product(
        (0, 3, 10, 30), range(1, 61, 2), (1, 10), ("never", "on_success", "on_failure", "always")
    ):
        spec = ComplexCheck(
            stat=stat,
            skill=3,
            tn=tn,
            required_successes=30,
            max_periods=60,
            fate_dice=10,
            activate_threat=policy,
            fate_per_critical=per,
        )
        odds._steps_cached.cache_clear()
        start = time.perf_counter()
        odds.complex_odds(spec)
        took = time.perf_counter() - start
        count += 1
        if took > worst:
            worst, worst_case = took, spec
    print(f"{count} largest complex checks, worst {worst * 1e3:.1f} ms")
    print(f"worst case: {worst_case}")


if __name__ == "__main__":
    main()
