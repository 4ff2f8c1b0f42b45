"""The arithmetic under the dice odds: sums of many dice, keeps, and the budget.

Exact integer arithmetic (whole-number weights over a common total): a sum of N dice as
one power of a packed big integer, or by J. C. P. Miller's recurrence for the power of a
polynomial, whichever the sizes make cheaper; two parts' sum as one big-integer product
of their packed weights; a keep as a walk over the faces counting how many dice show
each. Every step says what it will cost before it runs (:class:`Work`), so a formula
past the budget is refused, not computed. :mod:`fairroll.odds.dice` reads a formula
into these steps.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from math import comb
from typing import Any

from fairroll.rules.errors import RuleError

__all__ = [
    "MAX_OUTCOMES",
    "WORK_BUDGET_MS",
    "Dist",
    "Weights",
    "Work",
    "as_key",
    "convolved",
    "kept_sum",
    "paired",
    "powered",
    "slot_bits",
]

#: The most different totals an odds answer (or any part of it) may have: enough for
#: ``10d20*10d20`` and ``3d1000``, and an answer stays small enough to send whole.
MAX_OUTCOMES = 20_001
#: The estimated work one formula's odds may take, in milliseconds of this engine's pace
#: on the reference machine (docs/rules/dice.md, "Odds", says which and measures it), in
#: a calculation worker, never on the event loop. Enough for every formula icepool answers
#: cold in well under a second (docs/rules/dice.md, "Odds"), each in less time than
#: icepool takes.
WORK_BUDGET_MS = 400

#: Weights of outcomes, and the total they are out of. The weights may add up to less
#: than the total: the rest is what the odds did not count (a die that went on past the
#: depth its chain was counted to), carried through every step as it is, never spread.
Weights = dict[Any, int]
Dist = tuple[int, Weights]


class Work:
    """The budget of one formula's odds: each step says what it will cost before it runs."""

    __slots__ = ("budget_ms", "cuts", "depths", "floats", "spent", "text")

    def __init__(self, text: str, budget_ms: float = WORK_BUDGET_MS) -> None:
        self.text = text
        self.budget_ms = budget_ms
        self.spent = 0.0
        #: avrae's arithmetic: Python's floats, as d20 reckons (0.57*100 < 57).
        self.floats = False
        #: Where the odds stopped counting a term's dice short of its VTT's limit: the
        #: term, ``explosions`` or ``rerolls``, and how many of them a die was counted to.
        self.cuts: list[tuple[str, str, int]] = []
        #: How deep each die is counted (set by the formula's odds).
        self.depths: Any = None

    def spend(self, microseconds: float, what: str) -> None:
        self.spent += microseconds
        if self.spent > self.budget_ms * 1000:
            raise self.refuse(
                f"{what} brings it to about {self.spent / 1000:.0f} ms of work, "
                f"{self.spent / 1000 / self.budget_ms:.1f} times the {self.budget_ms:g} ms "
                "odds allow"
            )

    def multiply(self, a_bits: int, b_bits: int, what: str) -> None:
        big, small = max(a_bits, b_bits) / 1000, max(min(a_bits, b_bits) / 1000, 1.0)
        self.spend(1.5 * big * small**0.585 + 1, what)

    def outcomes(self, count: int, *, at_least: bool = False) -> None:
        if count > MAX_OUTCOMES:
            if at_least:  # counting stopped once past the limit
                raise self.refuse(
                    f"it has more than {MAX_OUTCOMES} different totals, as many as odds allow"
                )
            raise self.refuse(
                f"it has {count} different totals, {count / MAX_OUTCOMES:.1f} times the "
                f"{MAX_OUTCOMES} odds allow"
            )

    def refuse(self, why: str) -> RuleError:
        return RuleError(
            f"the odds of {self.text!r} are too large to compute exactly: {why}",
            field="formula",
        )


def as_key(value: Any) -> Any:
    """A value as a weights key: an int where it is whole (so sums can be packed)."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value


def paired(a: Dist, b: Dist, op: Callable[[Any, Any], Any], work: Work) -> Dist:
    """Every outcome of one side with every outcome of the other."""
    (ta, wa), (tb, wb) = a, b
    pairs = len(wa) * len(wb)
    work.spend(pairs * (0.2 + slot_bits(ta * tb) / 20_000), "a product")
    out: Weights = {}
    for x, p in wa.items():
        for y, q in wb.items():
            k = as_key(op(x, y))
            out[k] = out.get(k, 0) + p * q
        if len(out) > MAX_OUTCOMES:
            work.outcomes(len(out), at_least=True)
    work.outcomes(len(out))
    return ta * tb, out


def powered(dist: Dist, n: int, work: Work) -> Dist:
    """``n`` independent copies of ``dist`` added up: the ``n``-th power of its weights as
    a polynomial, by whichever of two exact ways costs less for its sizes."""
    total, weights = dist
    if n == 1:  # one die: itself
        work.outcomes(len(weights))
        return dist
    if not all(type(v) is int for v in weights):
        result: Dist = (1, {0: 1})
        for _ in range(n):
            result = convolved(result, dist, work)
        return result
    low, high = min(weights), max(weights)
    slot = slot_bits(total**n)
    width = n * (high - low) + 1
    work.outcomes(width)
    span = high - low
    # The packed power: squarings up to the last, of half the result's size (about 1.5
    # times the last). The recurrence: ``span`` small multiplications per total.
    half = slot * width // 2
    packed_cost = 1.5 * (half / 1000) * max(half / 1000, 1) ** 0.585 + half / 1000
    recurrence_cost = width * span * (0.1 + slot / 20_000)
    what = f"the sum of {n} dice"
    if recurrence_cost < packed_cost:
        work.spend(recurrence_cost + width * 1.5, what)
        counts = _miller([weights.get(low + j, 0) for j in range(span + 1)], n, width)
    else:
        work.multiply(half, half, what)
        work.spend(half / 1000 + width * 1.5, what)
        counts = _unpack(_pack(weights, low, high, slot) ** n, slot, width)
    return total**n, {v + n * low: c for v, c in enumerate(counts) if c}


def _miller(p: list[int], n: int, width: int) -> list[int]:
    """The coefficients of ``P(x) ** n`` (``P``'s coefficients ``p``, ``p[0]`` not 0) by
    J. C. P. Miller's recurrence: ``k p0 a_k = sum_j ((n + 1) j - k) p_j a_(k - j)``, every
    division exact (the ``a_k`` are integers)."""
    m = len(p) - 1
    p0 = p[0]
    a = [p0**n]
    for k in range(1, width):
        acc = 0
        for j in range(1, min(k, m) + 1):
            if p[j]:
                acc += ((n + 1) * j - k) * p[j] * a[k - j]
        a.append(acc // (k * p0))
    return a


def kept_sum(
    n: int,
    select: tuple[int, bool],
    die_total: int,
    die: Weights,
    value: Callable[[Any], Any],
    work: Work,
) -> Dist:
    """The kept dice of ``n`` (the ``k`` highest, or lowest, by face): what they add up to."""
    k, highest = select
    # A die's weights may leave out what its odds did not count (a chain cut short): a
    # pool with such a die is left out too, so ``rest`` starts from what is counted.
    counted = sum(die.values())
    if k == 0:  # nothing kept: the term is 0
        return die_total**n, {0: counted**n}
    faces = sorted(die, reverse=highest)
    low = min(value(f) for f in faces)
    total = die_total**n
    slot = slot_bits(total)
    slots = k * (max(value(f) for f in faces) - low) + 1
    # Each step shifts, multiplies and adds a polynomial of up to ``slots`` weights.
    steps = len(faces) * k * n
    work.spend(steps * (0.3 + slots * slot / 15_000), f"keeping {k} of {n} dice")
    # kept[m]: the dice assigned so far (m of them, all kept, m < k), as a packed
    # polynomial in (value - low) per kept die; its coefficients are weights.
    kept = [0] * k
    kept[0] = 1
    done = 0
    rest = counted
    for face in faces:
        weight = die[face]
        rest -= weight
        shift = slot * (value(face) - low)
        after = [0] * k
        for m in range(k):
            if not kept[m]:
                continue
            left = n - m
            power = 1
            for j in range(left + 1):
                coefficient = comb(left, j) * power
                if m + j < k:
                    after[m + j] += (kept[m] * coefficient) << (shift * j)
                elif rest or j == left:
                    lower = rest ** (left - j)
                    done += (kept[m] * coefficient * lower) << (shift * (k - m))
                power *= weight
        kept = after
    counts = _unpack(done, slot, slots)
    return total, {v + k * low: c for v, c in enumerate(counts) if c}


def convolved(a: Dist, b: Dist, work: Work) -> Dist:
    """The sum of two independent parts."""
    (ta, wa), (tb, wb) = a, b
    if not all(type(v) is int for v in (*wa, *wb)):
        return paired(a, b, lambda x, y: x + y, work)  # fractions: pair them up
    la, ha, lb, hb = min(wa), max(wa), min(wb), max(wb)
    width = ha - la + hb - lb + 1
    pairs = len(wa) * len(wb)
    slot = slot_bits(ta * tb)
    if pairs <= 4096 or width > MAX_OUTCOMES:  # few pairs, or sparse: pair them up
        work.spend(pairs * (0.2 + slot / 20_000), "a sum")
        out: Weights = {}
        for x, p in wa.items():
            for y, q in wb.items():
                out[x + y] = out.get(x + y, 0) + p * q
        work.outcomes(len(out))
        return ta * tb, out
    work.multiply(slot * (ha - la + 1), slot * (hb - lb + 1), "a sum")
    packed = _pack(wa, la, ha, slot) * _pack(wb, lb, hb, slot)
    counts = _unpack(packed, slot, width)
    out = {v + la + lb: c for v, c in enumerate(counts) if c}
    work.outcomes(len(out))
    return ta * tb, out


def slot_bits(total: int) -> int:
    """Bits per packed outcome: whole bytes, wide enough for ``total``."""
    return (total.bit_length() + 8) // 8 * 8


def _pack(weights: Weights, low: int, high: int, slot: int) -> int:
    size = slot // 8
    data = b"".join(weights.get(v, 0).to_bytes(size, "little") for v in range(low, high + 1))
    return int.from_bytes(data, "little")


def _unpack(packed: int, slot: int, count: int) -> list[int]:
    size = slot // 8
    data = packed.to_bytes(size * count, "little")
    return [int.from_bytes(data[i * size : (i + 1) * size], "little") for i in range(count)]
