"""Exact odds of a dice formula: the distribution of its total.

Every part of a formula has a distribution, kept as whole-number weights over a
common total (``{3: 1, 4: 3, ...}`` of 216 for 3d6), so nothing is rounded:

- a die's faces weigh 1 each of ``sides``; a reroll reweighs them (``ro`` once:
  a matching face keeps ``m/s`` of itself, every face gains ``m/s²``; ``r`` up to
  10 times: the same, summed as a geometric series, exactly);
- one die and its explosions is a *chain*: built from the last die allowed
  (which stands whatever it shows) outwards, each die either stops or adds the
  chain after it;
- ``N`` chains add by convolution, done as one multiplication of big integers
  (each distribution packed into an integer, one slot per outcome, wide enough
  that no slot overflows), and so do the terms of a sum;
- keeping the ``k`` highest of ``N`` dice runs over the faces from the best down,
  counting how many dice show each face (a multinomial), and stops adding once
  ``k`` dice are kept: the rest only need to show lower faces;
- a product pairs every outcome of one side with every outcome of the other.

The cost is bounded before it is paid. Each step estimates its own cost from
the sizes it is given (CPython multiplies big integers by Karatsuba, about
``1.5 µs x kbits ** 1.585`` on the reference machine; a Fraction written out
costs a few µs) and charges it to a budget of :data:`WORK_BUDGET_MS`; a formula
whose odds would need more, or more than :data:`MAX_OUTCOMES` totals, is refused
with a :class:`RuleError` saying so, before the work is done (the odds operation's description
says the same), so no accepted formula takes more than a few hundred milliseconds.

>>> from fairroll.rules.dice import parse
>>> total, weights = formula_odds(parse("2d6"))
>>> total, weights[7], weights[2]
(36, 6, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

from fairroll.rules.dice import EXPLOSION_DEPTH, REROLL_LIMIT, DiceTerm, Node, ParsedFormula
from fairroll.rules.errors import RuleError

__all__ = ["MAX_OUTCOMES", "WORK_BUDGET_MS", "Work", "formula_odds"]

#: The most different totals an odds answer (or any part of it) may have: enough for
#: ``10d20*10d20`` and ``3d1000``, and an answer stays a few hundred kilobytes.
MAX_OUTCOMES = 20_001
#: The estimated work one formula's odds may take, in milliseconds of this engine's pace
#: on the reference machine (2 cores, CPython 3.11), in a calculation worker, never on
#: the event loop. Enough for every formula icepool answers cold in well under a second
#: (docs/rules/dice.md, "Odds"), each in less time than icepool takes.
WORK_BUDGET_MS = 400

#: Weights of outcomes, and the total they are out of.
Weights = dict[int, int]
Dist = tuple[int, Weights]


def formula_odds(formula: ParsedFormula, work: Work | None = None) -> Dist:
    """The exact distribution of a formula's total: ``(total, {value: weight})``, where
    ``weight / total`` is each value's probability (``work``: the budget it is charged to)."""
    work = work or Work(formula.text)
    total, weights = _node(formula.tree, work)
    # Writing each probability out (a reduced fraction, its float) is paid for too.
    work.spend(len(weights) * (4 + total.bit_length() / 200), "writing the answer")
    return total, weights


class Work:
    """The budget of one formula's odds: each step says what it will cost before it runs."""

    __slots__ = ("budget_ms", "spent", "text")

    def __init__(self, text: str, budget_ms: float = WORK_BUDGET_MS) -> None:
        self.text = text
        self.budget_ms = budget_ms
        self.spent = 0.0

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

    def outcomes(self, count: int) -> None:
        if count > MAX_OUTCOMES:
            raise self.refuse(
                f"it has {count} different totals, {count / MAX_OUTCOMES:.1f} times the "
                f"{MAX_OUTCOMES} odds allow"
            )

    def refuse(self, why: str) -> RuleError:
        return RuleError(
            f"the odds of {self.text!r} are too large to compute exactly: {why}",
            field="formula",
        )


def _node(node: Node, work: Work) -> Dist:
    if node.kind == "const":
        return 1, {node.value: 1}
    if node.kind == "term":
        return _term(node.dice, work)
    parts = [_node(p, work) for p in node.parts]
    if node.kind == "neg":
        total, weights = parts[0]
        return total, {-v: w for v, w in weights.items()}
    a, b = parts
    if node.kind == "add":
        return _convolve(a, b, work)
    if node.kind == "sub":
        return _convolve(a, (b[0], {-v: w for v, w in b[1].items()}), work)
    return _product(a, b, work)


def _term(term: DiceTerm, work: Work) -> Dist:
    """The exact distribution of one dice term's value."""
    low, high = term.bounds()
    work.outcomes(high - low + 1)
    die_total, die = _die(term)
    value: Callable[[int], int] = (
        (lambda v: 1 if term.success is not None and term.success(v) else 0)
        if term.success is not None
        else (lambda v: v)
    )
    if term.keep is not None:
        return _keep(term, die_total, die, value, work)
    chain = _chain(term, die_total, die, value, work)
    return _power(chain, term.count, work)


def _die(term: DiceTerm) -> Dist:
    """One die of ``term`` after its rerolls: each face's weight out of a common total."""
    faces, sides = term.faces, len(term.faces)
    if term.reroll is None:
        return sides, dict.fromkeys(faces, 1)
    reroll = term.reroll
    matching = sum(1 for v in faces if reroll(v))
    limit = 1 if term.reroll_once else REROLL_LIMIT
    # A face stands at try t < limit if it does not match (after t matching tries), and
    # whatever it is at try ``limit``: out of sides ** (limit + 1),
    # weight(f) = [f does not match] * sum_t matching**t * sides**(limit - t) + matching**limit
    stops = sum(matching**t * sides ** (limit - t) for t in range(limit))
    last = matching**limit
    return sides ** (limit + 1), {v: (0 if reroll(v) else stops) + last for v in faces}


def _chain(
    term: DiceTerm, die_total: int, die: Weights, value: Callable[[int], int], work: Work
) -> Dist:
    """A die and its explosions: what they add (or count) together."""
    standing: Weights = {}
    for face, weight in die.items():
        standing[value(face)] = standing.get(value(face), 0) + weight
    if term.explode is None:
        return die_total, standing
    explode = term.explode
    stops = {face: w for face, w in die.items() if not explode(face)}
    goes_on: Dist = (die_total, {})
    for face, weight in die.items():
        if explode(face):
            goes_on[1][value(face)] = goes_on[1].get(value(face), 0) + weight
    chain: Dist = (die_total, standing)  # the last die allowed stands whatever it shows
    for _ in range(EXPLOSION_DEPTH):
        total, after = _convolve(goes_on, chain, work)
        scale = chain[0]
        for face, weight in stops.items():
            after[value(face)] = after.get(value(face), 0) + weight * scale
        chain = (total, after)
    return chain


def _power(dist: Dist, n: int, work: Work) -> Dist:
    """``n`` independent copies of ``dist`` added up: one power of the packed weights."""
    total, weights = dist
    low, high = min(weights), max(weights)
    slot = _slot(total**n)
    width = n * (high - low) + 1
    work.outcomes(width)
    # Squarings up to the last, of half the result's size: about 1.5 times the last.
    half = slot * width // 2
    work.multiply(half, half, f"the sum of {n} dice")
    work.spend(half / 1000 + width * 1.5, f"the sum of {n} dice")
    counts = _unpack(_pack(weights, low, high, slot) ** n, slot, width)
    return total**n, {v + n * low: c for v, c in enumerate(counts) if c}


def _keep(
    term: DiceTerm, die_total: int, die: Weights, value: Callable[[int], int], work: Work
) -> Dist:
    """The kept dice of ``term`` (``kh`` or ``kl`` ``k`` of ``n``): what they add up to."""
    n, k = term.count, term.keep_count
    faces = sorted(die, reverse=term.keep == "kh")
    low = min(value(f) for f in faces)
    total = die_total**n
    slot = _slot(total)
    slots = k * (max(value(f) for f in faces) - low) + 1
    # Each step shifts, multiplies and adds a polynomial of up to ``slots`` weights.
    steps = len(faces) * k * n
    work.spend(steps * (0.3 + slots * slot / 15_000), f"keeping {k} of {n} dice")
    # kept[m]: the dice assigned so far (m of them, all kept, m < k), as a packed
    # polynomial in (value - low) per kept die; its coefficients are weights.
    kept = [0] * k
    kept[0] = 1
    done = 0
    rest = die_total
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
    counts = _unpack(done, slot, k * (max(value(f) for f in faces) - low) + 1)
    return total, {v + k * low: c for v, c in enumerate(counts) if c}


def _convolve(a: Dist, b: Dist, work: Work) -> Dist:
    """The sum of two independent parts."""
    (ta, wa), (tb, wb) = a, b
    la, ha, lb, hb = min(wa), max(wa), min(wb), max(wb)
    width = ha - la + hb - lb + 1
    pairs = len(wa) * len(wb)
    slot = _slot(ta * tb)
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


def _product(a: Dist, b: Dist, work: Work) -> Dist:
    (ta, wa), (tb, wb) = a, b
    pairs = len(wa) * len(wb)
    work.spend(pairs * (0.2 + _slot(ta * tb) / 20_000), "a product")
    out: Weights = {}
    for x, p in wa.items():
        for y, q in wb.items():
            out[x * y] = out.get(x * y, 0) + p * q
    work.outcomes(len(out))
    return ta * tb, out


def _slot(total: int) -> int:
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
