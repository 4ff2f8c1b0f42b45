"""Exact odds of dice formulas: how long the slowest accepted formulas take, and icepool.

Times ``POST /v1/dice/rolls/odds``'s work in process (parse, exact distribution, the
answer's fractions), for formulas at the limits and for random formulas from the
grammar, and prints the slowest; then the same cases through icepool, the field's
reference, as a ratio measured in this run.

    python benchmarks/dice_odds.py [--random 3000] [--seed 7]
    python benchmarks/dice_odds.py --icepool-only --repeat 3
    python benchmarks/dice_odds.py --explode [--icepool-timeout 900]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec

from fairroll.mechanics import MECHANICS
from fairroll.rules import RuleError
from fairroll.rules.dice import Formula, parse

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
from test_dice import WITHIN_ICEPOOLS_SECOND  # noqa: E402  (issue 30's list, kept in one place)
from test_dice_dialects import NEW_FORMS_AGAINST_ICEPOOL  # noqa: E402  (the dialects' new forms)
from test_dice_odds import ALMOST_SURELY  # noqa: E402  (issue 43's dice that explode almost surely)

ODDS = MECHANICS["dice.roll"].odds_of

#: Formulas at or near the odds' limits (the slowest kinds of work each).
AT_THE_LIMITS = [
    "100d20",
    "60d20",
    "100d6",
    "20d100",
    "100d6ro<5",
    "45d10>=8!",
    "10d10>=8!",
    "2d1000kh1",
    "8d100k4",
    "50d20kh10>=15",
    "30d6kh15",
    "(10d6)*(10d6)",
    "40dF*2dF",
    "1d6+1d8+1d10+1d12+1d20+1d100",
    "3d6!+3d8!+3d10!",
    "100d100",
    "100d10>=8!",
]

#: Formulas timed against icepool (the reference: a ratio, not a correctness check;
#: tests/test_dice.py checks equality), each built in icepool by tests/test_dice.py's
#: own translation (``icepool_formula``: icepool's operations, not fairroll's engine),
#: exploding dice counted as deep as fairroll's odds count them and cut there the same
#: way (``Work.cuts``, found before icepool's clock starts). icepool caches what it has
#: computed, so each is timed cold, in a fresh process, as a server would meet a new
#: formula; fairroll is timed cold too (its first call).
AGAINST_ICEPOOL = [
    "4d6kh3",
    "8d100k4",
    "20d100",
    "3d6!+3d8!+3d10!",
    *WITHIN_ICEPOOLS_SECOND,
    # exploding pools at the VTTs' depth (each die counted until the rest is below
    # EPSILON, or as deep as fairroll's 1,001 dice a roll let 100 dice go)
    "10d6!",
    "20d10!!",
    "4d6!>5",
    "100d6!",
]
COLD = (
    "import sys, time\n"
    f"sys.path.insert(0, {str(TESTS)!r})\n"
    "from test_dice import icepool_formula\n"
    "from fairroll.odds.dice import Work, formula_odds\n"
    "from fairroll.rules.dice import parse\n"
    "parsed = parse(sys.argv[1]); work = Work(sys.argv[1], budget_ms=10**9)\n"
    "formula_odds(parsed, work); cuts = {text: depth for text, _, depth in work.cuts}\n"
    "start = time.perf_counter(); die = icepool_formula(parsed.tree, cuts); die.denominator()\n"
    "print((time.perf_counter() - start) * 1000)"
)


def icepool_cold(formula: str) -> float:
    ran = subprocess.run(
        [sys.executable, "-c", COLD, formula], capture_output=True, text=True, check=True
    )
    return float(ran.stdout)


def fairroll_cold(formula: str, dialect: str = "roll20") -> float:
    """The odds' work of ``formula`` in a fresh process (parse, exact distribution, the
    answer's fractions), as icepool's is."""
    code = (
        "import sys, time\n"
        "from fairroll.mechanics import MECHANICS\n"
        "from fairroll.rules.dice import Formula\n"
        "odds = MECHANICS['dice.roll'].odds_of; odds(Formula(formula='1d6', dialect=sys.argv[2]))\n"
        "start = time.perf_counter(); odds(Formula(formula=sys.argv[1], dialect=sys.argv[2]))\n"
        "print((time.perf_counter() - start) * 1000)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, formula, dialect], capture_output=True, text=True, check=True
    )
    return float(ran.stdout)


def icepool_built_cold(built: str) -> float:
    """icepool building a distribution from its own operations (code), cold."""
    code = (
        "import sys, time, icepool\n"
        "start = time.perf_counter(); die = eval(sys.argv[1], {'icepool': icepool}); "
        "die.denominator()\n"
        "print((time.perf_counter() - start) * 1000)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, built], capture_output=True, text=True, check=True
    )
    return float(ran.stdout)


def timed(formula: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        ODDS(Formula(formula=formula))
        best = min(best, time.perf_counter() - start)
    return best * 1000


def random_formula(rng: random.Random) -> str:
    def dice() -> str:
        count = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 20, 30, 50, 100])
        sides = rng.choice(["4", "6", "8", "10", "12", "20", "100", "%", "F", "2", "3", "1000"])
        text = f"{count}d{sides}"
        faces = 3 if sides == "F" else 100 if sides == "%" else int(sides)
        low = -1 if sides == "F" else 1
        kind = rng.random()
        if kind < 0.25 and count > 1:
            text += rng.choice(["kh", "kl", "dh", "dl"]) + str(rng.randint(1, count - 1))
        elif kind < 0.4:
            text += rng.choice(["!", f"!>{rng.randint(low + 1, low + faces - 1)}"])
        elif kind < 0.55:
            text += rng.choice(["r", "ro"]) + f"<{rng.randint(low, low + faces - 2)}"
        if rng.random() < 0.2:
            text += f">={rng.randint(low, low + faces - 1)}"
        return text

    def part(depth: int) -> str:
        roll = rng.random()
        if depth > 2 or roll < 0.5:
            return dice()
        if roll < 0.6:
            return str(rng.randint(0, 20))
        op = rng.choice(["+", "+", "-", "*"])
        text = f"{part(depth + 1)}{op}{part(depth + 1)}"
        return f"({text})" if rng.random() < 0.3 else text

    return part(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--repeat", type=int, default=3, help="cold runs of each new form (the best is printed)"
    )
    parser.add_argument(
        "--new-forms-only", action="store_true", help="time only the dialects' forms"
    )
    parser.add_argument(
        "--icepool-only", action="store_true", help="time only the formulas against icepool"
    )
    parser.add_argument(
        "--explode", action="store_true", help="time only the dice that explode almost surely"
    )
    parser.add_argument(
        "--icepool-timeout",
        type=float,
        default=0,
        help="with --explode: seconds icepool may take at the same cut (0: not run)",
    )
    args = parser.parse_args()
    ODDS(Formula(formula="1d6"))  # build the parser once
    if args.explode:
        almost_surely(args.repeat, args.icepool_timeout)
        return
    if args.new_forms_only:
        new_forms(args.repeat)
        return
    if args.icepool_only:
        against_icepool(args.repeat)
        return

    print("formulas at the limits (best of 3):")
    for formula in AT_THE_LIMITS:
        try:
            print(f"  {formula:32} {timed(formula):7.2f} ms")
        except RuleError as refused:
            print(f"  {formula:32} refused: {str(refused).split(': ', 2)[-1]}")

    rng = random.Random(args.seed)
    times: list[tuple[float, str]] = []
    refused = 0
    for _ in range(args.random):
        formula = random_formula(rng)
        try:
            parse(formula)
            times.append((timed(formula, repeat=1), formula))
        except RuleError:  # refused by the roll's limits or by the odds' budget
            refused += 1
    times.sort()
    values = [t for t, _ in times]
    print(
        f"\n{len(times)} random formulas answered, {refused} refused: "
        f"p50 {statistics.median(values):.2f} ms, "
        f"p99 {values[int(len(values) * 0.99)]:.2f} ms, max {values[-1]:.2f} ms"
    )
    for elapsed, formula in times[-5:]:
        print(f"  {formula:40} {elapsed:7.2f} ms")

    against_icepool(1)
    new_forms(args.repeat)


def against_icepool(repeat: int) -> None:
    print(
        f"\nagainst icepool (same distribution; each cold, in a fresh process, best of {repeat}):"
    )
    for formula in AGAINST_ICEPOOL:
        ours = min(fairroll_cold(formula) for _ in range(repeat))
        theirs = min(icepool_cold(formula) for _ in range(repeat))
        print(
            f"  {formula:32} fairroll {ours:7.2f} ms, icepool {theirs:8.2f} ms, "
            f"{theirs / ours:6.1f}x"
        )


def new_forms(repeat: int) -> None:
    print(
        f"\nthe dialects' new forms against icepool (each cold, in a fresh process, best of "
        f"{repeat}):"
    )
    for formula, dialect, built in NEW_FORMS_AGAINST_ICEPOOL:
        ours = min(fairroll_cold(formula, dialect) for _ in range(repeat))
        theirs = min(icepool_built_cold(built) for _ in range(repeat))
        print(
            f"  {formula:24} {dialect:8} fairroll {ours:7.2f} ms, icepool {theirs:8.2f} ms, "
            f"{theirs / ours:6.1f}x"
        )


#: icepool's ``Die.explode`` at the depth fairroll's odds chose, a die that would go on
#: worth 10^12 (``end=``), timed cold; then held equal to fairroll's bars (not timed).
EXPLODE_ICEPOOL = (
    "import sys, time, icepool\n"
    "from fractions import Fraction\n"
    "from fairroll.odds.dice import Work, formula_odds\n"
    "from fairroll.rules.dice import parse\n"
    "parsed = parse(sys.argv[1], sys.argv[2]); work = Work(sys.argv[1], budget_ms=10**9)\n"
    "total, weights = formula_odds(parsed, work); ((_, _, depth),) = work.cuts\n"
    "(term,) = parsed.terms; goes = [f for f in term.faces if term.explode(f)]\n"
    "start = time.perf_counter()\n"
    "die = icepool.Die(list(term.faces)).explode(goes, depth=depth, end=10**12)\n"
    "die.denominator(); took = (time.perf_counter() - start) * 1000\n"
    "bars = {v: Fraction(q, die.denominator()) for v, q in die.items() if q and v < 10**12}\n"
    "print(took, bars == {v: Fraction(w, total) for v, w in weights.items()})"
)


#: Answered before, timed in the same run for scale: the largest exploding pool's answer.
FOR_SCALE = [("100d6!", "roll20"), ("100d8!>3", "roll20")]


def almost_surely(repeat: int, icepool_timeout: float) -> None:
    """Issue 43's dice that explode almost surely, as served: cold (a fresh process, best
    of ``repeat``) and warm (the best of ``repeat`` more in this one), the answer's size
    in bytes of JSON, the depth counted and the last bar; icepool at the same cut."""
    print(
        f"\ndice that explode almost surely (cold: a fresh process, best of {repeat}; warm: "
        f"best of {repeat} in this one; size: the answer's JSON):"
    )
    for formula, dialect in [*ALMOST_SURELY, *FOR_SCALE]:
        cold = min(fairroll_cold(formula, dialect) for _ in range(repeat))
        request = Formula(formula=formula, dialect=dialect)  # type: ignore[arg-type]
        warm = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            odds = ODDS(request)
            warm = min(warm, (time.perf_counter() - start) * 1000)
        size = len(msgspec.json.encode(odds))
        (total,) = odds.distributions
        beyond = total.chances[-1]
        depth = beyond.label.split(" past ")[1].split(" a die")[0]
        line = (
            f"  {formula:10} {dialect:8} cold {cold:7.1f} ms, warm {warm:7.1f} ms, "
            f"{size / 1e6:5.2f} MB, {len(total.chances) - 1} totals, cut past {depth}, "
            f"beyond {beyond.probability.value:.3g}"
        )
        if icepool_timeout and (formula, dialect) not in FOR_SCALE:
            try:
                ran = subprocess.run(
                    [sys.executable, "-c", EXPLODE_ICEPOOL, formula, dialect],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=icepool_timeout,
                )
                took, equal = ran.stdout.split()
                line += f"; icepool {float(took) / 1000:.1f} s, equal: {equal}"
            except subprocess.TimeoutExpired:
                line += f"; icepool over {icepool_timeout:g} s"
        print(line, flush=True)


if __name__ == "__main__":
    main()
