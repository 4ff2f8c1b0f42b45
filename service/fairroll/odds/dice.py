"""Exact odds of a dice formula: the distribution of its total.

Every part of a formula has a distribution, kept as whole-number weights over a
common total (``{3: 1, 4: 3, ...}`` of 216 for 3d6), so nothing is rounded:

- a die's faces weigh 1 each of ``sides``; a reroll reweighs them (``ro`` once:
  a matching face keeps ``m/s`` of itself, every face gains ``m/s²``; ``r`` up to
  10 times: the same, summed as a geometric series, exactly);
- one die and its explosions is a *chain*: built from the last die allowed
  (which stands whatever it shows) outwards, each die either stops or adds the
  chain after it;
- ``N`` chains add up to a power of their weights as a polynomial, computed either as
  one power of a big integer (each distribution packed into an integer, one slot per
  outcome, wide enough that no slot overflows) or by J. C. P. Miller's recurrence (a
  few small multiplications per total), whichever its sizes make cheaper; the terms of
  a sum convolve as one multiplication of packed integers;
- keeping the ``k`` highest of ``N`` dice runs over the faces from the best down,
  counting how many dice show each face (a multinomial), and stops adding once
  ``k`` dice are kept: the rest only need to show lower faces;
- a product pairs every outcome of one side with every outcome of the other.

The cost is bounded before it is paid. Each step estimates its own cost from
the sizes it is given (CPython multiplies big integers by Karatsuba, so a product
costs in proportion to ``kbits ** 1.585``; the model and its constants live in one
place, :meth:`Work.multiply`) and charges it to a budget of :data:`WORK_BUDGET_MS`; a formula
whose odds would need more, or more than :data:`MAX_OUTCOMES` totals, is refused
with a :class:`RuleError` saying so, before the work is done (the odds operation's description
says the same), so no accepted formula takes more than a few hundred milliseconds.

>>> from fairroll.rules.dice import parse
>>> total, weights = formula_odds(parse("2d6"))
>>> total, weights[7], weights[2]
(36, 6, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from math import comb
from typing import Any

from fairroll.rules.dice import EXPLOSION_DEPTH, REROLL_LIMIT, DiceTerm, Node, ParsedFormula
from fairroll.rules.dice.model import (
    Clamp,
    Count,
    Crit,
    Explode,
    Group,
    Match,
    Modifier,
    Reroll,
    Select,
    Sort,
    Test,
)
from fairroll.rules.dice.rolling import PoolDie, clamp_pool, foundry_count, js_round
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
Weights = dict[Any, int]
Dist = tuple[int, Weights]


def formula_odds(formula: ParsedFormula, work: Work | None = None) -> Dist:
    """The exact distribution of a formula's total: ``(total, {value: weight})``, where
    ``weight / total`` is each value's probability (``work``: the budget it is charged to)."""
    work = work or Work(formula.text)
    total, weights = _node(formula.tree, work)
    if formula.dialect == "avrae":  # d20's total is int() of its value
        weights = _mapped(weights, math.trunc)
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
    kind = node.kind
    if kind == "const":
        return 1, {_key(node.number): 1}
    if kind == "term":
        return _term(node.dice, work)
    if kind == "group":
        return _group(node, work)
    parts = [_node(p, work) for p in node.parts]
    if kind in ("max", "min"):
        pick = max if kind == "max" else min
        result = parts[0]
        for part in parts[1:]:
            result = _pairs(result, part, pick, work)
        return result
    if kind in _UNARY:
        total, weights = parts[0]
        return total, _mapped(weights, _UNARY[kind])
    a, b = parts
    if kind == "add":
        return _convolve(a, b, work)
    if kind == "sub":
        return _convolve(a, (b[0], _mapped(b[1], lambda v: -v)), work)
    if kind == "mul" and all(type(v) is int for v in (*a[1], *b[1])):
        return _product(a, b, work)
    return _pairs(a, b, _binary(node), work)


def _product(a: Dist, b: Dist, work: Work) -> Dist:
    """The product of two whole-valued parts: every pair, without a call per pair."""
    (ta, wa), (tb, wb) = a, b
    work.spend(len(wa) * len(wb) * (0.1 + _slot(ta * tb) / 20_000), "a product")
    out: Weights = {}
    get = out.get
    right = list(wb.items())
    for x, p in wa.items():
        for y, q in right:
            k = x * y
            out[k] = get(k, 0) + p * q
    work.outcomes(len(out))
    return ta * tb, out


def _key(value: Any) -> Any:
    """A value as a weights key: an int where it is whole (so sums can be packed)."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value


def _mapped(weights: Weights, f: Callable[[Any], Any]) -> Weights:
    out: Weights = {}
    for v, w in weights.items():
        k = _key(f(v))
        out[k] = out.get(k, 0) + w
    return out


_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": lambda v: -v,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": lambda v: js_round(Fraction(v)),
    "abs": abs,
}

_COMPARE: dict[str | None, Callable[[Any, Any], bool]] = {
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
    ">=": lambda x, y: x >= y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    "<": lambda x, y: x < y,
}


def _binary(node: Node) -> Callable[[Any, Any], Any]:
    kind = node.kind
    if kind == "mul":
        return lambda x, y: x * y
    if kind == "div":
        return lambda x, y: Fraction(x) / y
    if kind == "idiv":
        return lambda x, y: Fraction(x) // y
    if kind == "mod":
        return lambda x, y: Fraction(x) % y
    if kind == "rem":
        return lambda x, y: x - y * math.trunc(Fraction(x) / y)
    if kind == "pow":
        return lambda x, y: Fraction(x) ** int(y)
    compare = _COMPARE[node.op]
    return lambda x, y: int(compare(x, y))


def _term(term: DiceTerm, work: Work) -> Dist:
    """The exact distribution of one dice term's value (Foundry's ``ms`` then moves the
    term's total, not each die)."""
    low, high = term.bounds()
    work.outcomes(high - low + 1)
    total, weights = _dice(term, work)
    margin = term.margin
    if margin is None:
        return total, weights
    above, target = margin
    return total, _mapped(weights, (lambda v: v - target) if above else (lambda v: target - v))


def _dice(term: DiceTerm, work: Work) -> Dist:
    plan = _plan(term)
    if plan.explode is not None:
        chain = _chain(plan, work)
        if plan.compound:
            # Roll20's !!: the chain is one die, kept or counted as a whole.
            plan.value = plan.counted
            return _pool(term, plan, chain, work)
        if plan.add_one is not None:
            raise _Refusal(term)("an explosion and a reroll-and-add")
        return _power(chain, term.count, work)
    return _pool(term, plan, plan.first, work)


def _pool(term: DiceTerm, plan: _Plan, die: Dist, work: Work) -> Dist:
    """``count`` independent dice of distribution ``die``: added, kept or counted."""
    die_total, weights = die
    if plan.select is not None:
        return _keep(term.count, plan.select, die_total, weights, plan.value, work)
    if plan.add_one is not None:
        return _add_one(term.count, die, plan, work)
    return _power((die_total, _mapped(weights, plan.value)), term.count, work)


class _Plan:
    """A term's modifiers as the odds compute them: the first die of a chain (rerolls and
    minimums applied), the dice its explosions add, the explosion, and what each die that
    stands counts (``value``, after the pool's later minimums and counting)."""

    def __init__(self) -> None:
        self.first: Dist = (1, {})
        self.extra: Dist = (1, {})
        self.explode: Explode | None = None
        self.compound = False
        self.penetrate = False
        self.depth = EXPLOSION_DEPTH
        self.select: tuple[int, bool] | None = None
        self.value: Callable[[Any], Any] = _same
        self.counted: Callable[[Any], Any] = _same
        self.add_one: Reroll | None = None


def _same(v: Any) -> Any:
    return v


class _Refusal:
    def __init__(self, term: DiceTerm) -> None:
        self.term = term

    def __call__(self, what: str) -> RuleError:
        return RuleError(
            f"formula, at offset {self.term.offset}: the odds of {self.term.text!r} are not "
            f"offered: {what} in one term (it rolls)",
            field="formula",
        )


def _plan(term: DiceTerm) -> _Plan:  # noqa: PLR0915  (one branch per kind of modifier)
    plan = _Plan()
    raw: Dist = (len(term.faces), dict.fromkeys(term.faces, 1))
    die = raw
    stage = 0  # 0: rerolls and minimums, 1: exploded, 2: kept
    after: list[Modifier] = []  # what runs on every standing die, in order
    refuse = _Refusal(term)
    for m in term.modifiers:
        if isinstance(m, Crit | Sort):
            continue
        if isinstance(m, Match):
            if m.total:
                raise refuse("counting matches")
            continue
        if isinstance(m, Reroll | Select) and m.also:
            raise refuse("an avrae operator with several selectors")
        if isinstance(m, Reroll):
            if m.rank is not None:
                raise refuse(f"rerolling the {'highest' if m.rank[0] == 'h' else 'lowest'} dice")
            if stage > 0 or after:
                raise refuse("a reroll after an explosion, a keep or a count")
            if m.mode == "add":
                if plan.add_one is not None:
                    raise refuse("two reroll-and-adds")
                plan.add_one = m
                continue
            if plan.add_one is not None:
                raise refuse("a reroll after a reroll-and-add")
            die = _reroll(die, raw, m)
        elif isinstance(m, Clamp):
            if term.dialect == "foundry" and stage != 2:
                # Foundry's min/max change what a die counts, not the face that later
                # modifiers compare: a mapping of each standing die's value.
                after.append(m)
            elif stage == 0 and not after and plan.add_one is None:
                die = (die[0], _mapped(die[1], _clamp(m)))
            elif stage == 2:
                raise refuse("a minimum or maximum after a keep")
            else:
                after.append(m)
        elif isinstance(m, Explode):
            if stage > 0 or after or plan.add_one is not None:
                raise refuse("an explosion after another, a keep or a count")
            plan.explode = m
            plan.compound = m.mode == "compound"
            plan.penetrate = m.mode == "penetrate"
            plan.depth = 1 if m.mode == "once" else EXPLOSION_DEPTH
            stage = 1
        elif isinstance(m, Select):
            if m.how == "test":
                after.append(m)
                continue
            if plan.select is not None or any(isinstance(x, Select) for x in after):
                raise refuse("two keeps")
            if plan.explode is not None and not plan.compound:
                raise refuse("keeping dice of a pool its explosions grow")
            if plan.add_one is not None:
                raise refuse("keeping dice of a pool a reroll-and-add grows")
            if any(isinstance(x, Count) and x.kind == "margin" for x in after):
                raise refuse("a keep after a margin")
            if any(isinstance(x, Clamp) for x in after) and (
                plan.explode is not None or term.dialect != "foundry"
            ):
                raise refuse("a keep after a minimum or maximum that follows an explosion")
            # avrae keeps (drops) what there is: kh5 of 3 dice keeps all, pl4 drops all.
            n = max(0, min(m.n if m.keep else term.count - m.n, term.count))
            plan.select = (n, (m.how == "h") == m.keep)
            stage = 2
        elif isinstance(m, Count):
            after.append(m)
    plan.first = die
    # Roll20 rerolls every die of a chain; the pool dialects roll the extra dice afresh.
    plan.extra = die if not term.pool else raw
    plan.value = _standing(term, after)
    if plan.compound:
        # The chain adds its faces; what stands (counted, kept) is the chain's sum.
        plan.counted = plan.value
        plan.value = _same
    return plan


def _clamp(m: Clamp) -> Callable[[Any], Any]:
    def clamped(v: Any) -> Any:
        if m.low is not None and v < m.low:
            v = m.low
        if m.high is not None and v > m.high:
            v = m.high
        return v

    return clamped


def _standing(term: DiceTerm, after: list[Modifier]) -> Callable[[Any], Any]:
    """What a standing die of face ``v`` counts, after the modifiers that run on each."""
    if not term.pool:
        counts = [m for m in after if isinstance(m, Count)]
        success = next((c.test for c in counts if c.kind == "success"), None)
        failure = next((c.test for c in counts if c.kind == "failure"), None)
        if success is None:
            return _same

        def roll20(v: Any, success: Test = success) -> int:
            if success(v):
                return 1
            return -1 if failure is not None and failure(v) else 0

        return roll20
    cache: dict[Any, Any] = {}

    def pool(v: Any) -> Any:
        if v not in cache:
            r = PoolDie(v)
            for m in after:
                if isinstance(m, Clamp):
                    clamp_pool([r], m, avrae=term.dialect == "avrae")
                elif isinstance(m, Select) and m.test is not None:
                    if m.test(r.value) != m.keep:
                        r.dropped = True
                elif isinstance(m, Count):
                    foundry_count([r], m)
            cache[v] = 0 if r.dropped else r.worth
        return cache[v]

    return pool


def _reroll(die: Dist, raw: Dist, m: Reroll) -> Dist:
    """``die`` after a reroll of its matching faces: a rerolled die is a fresh raw die,
    rerolled again (``until``) while it matches, up to the limit."""
    limit = 1 if m.mode == "once" else REROLL_LIMIT
    test = m.test
    sides = raw[0]
    faces = list(raw[1])
    matching = sum(1 for v in faces if test(v))
    # A fresh raw die rerolled up to ``limit - 1`` more times, out of sides ** limit:
    # weight(f) = [f does not match] * sum_t matching**t * sides**(more - t) + matching**more
    more = limit - 1
    stops = sum(matching**t * sides ** (more - t) for t in range(more))
    last = matching**more
    fresh_total = sides ** (more + 1)
    fresh = {v: (0 if test(v) else stops) + last for v in faces}
    total, weights = die
    hit = sum(w for v, w in weights.items() if test(v))
    out: Weights = {}
    for v, w in weights.items():
        if not test(v):
            out[v] = out.get(v, 0) + w * fresh_total
    for v, w in fresh.items():
        if w and hit:
            out[v] = out.get(v, 0) + hit * w
    return total * fresh_total, {v: w for v, w in out.items() if w}


def _chain(plan: _Plan, work: Work) -> Dist:
    """A die and its explosions: what they add (or count) together. Built from the last
    die allowed (which stands whatever it shows) back to the first."""
    explode = plan.explode
    if explode is None:
        raise TypeError("a chain needs an explosion")
    value = plan.value  # a compounding chain adds faces: its plan's value is the face

    def counted(face: Any, depth: int) -> Any:
        return value(face - 1 if plan.penetrate and depth > 0 else face)

    def level(die: Dist, depth: int, after: Dist | None) -> Dist:
        total, weights = die
        if after is None:  # the last die allowed stands
            return total, _mapped(weights, lambda f: counted(f, depth))
        goes_on: Weights = {}
        stops: Weights = {}
        for face, w in weights.items():
            target = goes_on if explode.test(face) else stops
            k = _key(counted(face, depth))
            target[k] = target.get(k, 0) + w
        summed = _convolve((total, goes_on), after, work) if goes_on else (total * after[0], {})
        out = dict(summed[1])
        for k, w in stops.items():
            out[k] = out.get(k, 0) + w * after[0]
        return total * after[0], out

    chain: Dist | None = None
    for depth in range(plan.depth, 0, -1):
        chain = level(plan.extra, depth, chain)
    return level(plan.first, 0, chain)


def _add_one(count: int, die: Dist, plan: _Plan, work: Work) -> Dist:
    """avrae's ``ra``: the first die of the pool that matches rolls one more, added."""
    m = plan.add_one
    if m is None:
        raise TypeError("no reroll-and-add to add")
    total, weights = die
    value = plan.value
    every = _power((total, _mapped(weights, value)), count, work)
    missing = {v: w for v, w in weights.items() if not m.test(v)}
    none: Dist = _power((total, _mapped(missing, value)), count, work) if missing else (0, {})
    some = {v: w - none[1].get(v, 0) for v, w in every[1].items()}
    some = {v: w for v, w in some.items() if w}
    extra_faces = plan.extra[1]
    extra: Dist = (len(extra_faces), _mapped(dict.fromkeys(extra_faces, 1), value))
    out: Weights = {}
    if some:
        out.update(_convolve((every[0], some), extra, work)[1])
    for v, w in none[1].items():
        out[v] = out.get(v, 0) + w * extra[0]
    return every[0] * extra[0], out


def _group(node: Node, work: Work) -> Dist:
    """A group's sub-rolls: the kept totals added, or the totals that meet a target counted."""
    how = node.how or Group()
    if how.then or (how.select is not None and (how.select.also or how.select.how == "test")):
        raise RuleError(
            f"formula, at offset {node.offset}: the odds of a set with several operators or "
            "a selection by value are not offered (it rolls)",
            field="formula",
        )
    if how.of_dice:
        (inner,) = node.parts
        select = how.select
        if inner.kind != "term" or select is None:
            raise RuleError(
                f"formula, at offset {node.offset}: the odds of keeping dice across a "
                "group of different dice are not offered (it rolls)",
                field="formula",
            )
        term = inner.dice
        n = select.n if select.keep else term.count - select.n
        faces: Weights = dict.fromkeys(term.faces, 1)
        chosen = (n, (select.how == "h") == select.keep)
        return _keep(term.count, chosen, len(term.faces), faces, _same, work)
    members = [_node(p, work) for p in node.parts]
    if how.count is not None and how.count.test is not None:
        test = how.count.test
        sign = -1 if how.count.kind == "failure" else 1
        result: Dist = (1, {0: 1})
        failure = how.failure.test if how.failure is not None else None
        for total, weights in members:
            hit = sum(w for v, w in weights.items() if test(v))
            miss = sum(w for v, w in weights.items() if failure and not test(v) and failure(v))
            each: Weights = {0: total - hit - miss}
            each[sign] = each.get(sign, 0) + hit
            each[-1] = each.get(-1, 0) + miss
            result = _convolve(result, (total, {v: w for v, w in each.items() if w}), work)
        return result
    if how.select is None:
        result = (1, {0: 1})
        for member in members:
            result = _convolve(result, member, work)
        return result
    select = how.select
    keep = select.n if select.keep else len(members) - select.n
    highest = (select.how == "h") == select.keep
    # The kept totals so far, best first, as states; each member adds its values.
    states: dict[tuple[Any, ...], int] = {(): 1}
    grand = 1
    for total, weights in members:
        work.spend(len(states) * len(weights) * 1.5, "a group's keep")
        nxt: dict[tuple[Any, ...], int] = {}
        for state, w in states.items():
            full = len(state) == keep
            worst = state[-1] if state else None
            for v, q in weights.items():
                if full and not (v > worst if highest else v < worst):
                    key = state  # not among the best: the state stands
                else:
                    kept = state[:-1] if full else state
                    key = tuple(sorted((*kept, v), reverse=highest))
                nxt[key] = nxt.get(key, 0) + w * q
        states = nxt
        grand *= total
        work.outcomes(len(states))
    out: Weights = {}
    for state, w in states.items():
        k = _key(sum(state, Fraction(0)))
        out[k] = out.get(k, 0) + w
    return grand, out


def _pairs(a: Dist, b: Dist, op: Callable[[Any, Any], Any], work: Work) -> Dist:
    """Every outcome of one side with every outcome of the other."""
    (ta, wa), (tb, wb) = a, b
    pairs = len(wa) * len(wb)
    work.spend(pairs * (0.2 + _slot(ta * tb) / 20_000), "a product")
    out: Weights = {}
    for x, p in wa.items():
        for y, q in wb.items():
            k = _key(op(x, y))
            out[k] = out.get(k, 0) + p * q
    work.outcomes(len(out))
    return ta * tb, out


def _power(dist: Dist, n: int, work: Work) -> Dist:
    """``n`` independent copies of ``dist`` added up: the ``n``-th power of its weights as
    a polynomial, by whichever of two exact ways costs less for its sizes."""
    total, weights = dist
    if not all(type(v) is int for v in weights):
        result: Dist = (1, {0: 1})
        for _ in range(n):
            result = _convolve(result, dist, work)
        return result
    low, high = min(weights), max(weights)
    slot = _slot(total**n)
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


def _keep(
    n: int,
    select: tuple[int, bool],
    die_total: int,
    die: Weights,
    value: Callable[[Any], Any],
    work: Work,
) -> Dist:
    """The kept dice of ``n`` (the ``k`` highest, or lowest, by face): what they add up to."""
    k, highest = select
    if k == 0:  # nothing kept: the term is 0
        return die_total**n, {0: die_total**n}
    faces = sorted(die, reverse=highest)
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
    counts = _unpack(done, slot, slots)
    return total, {v + k * low: c for v, c in enumerate(counts) if c}


def _convolve(a: Dist, b: Dist, work: Work) -> Dist:
    """The sum of two independent parts."""
    (ta, wa), (tb, wb) = a, b
    if not all(type(v) is int for v in (*wa, *wb)):
        return _pairs(a, b, lambda x, y: x + y, work)  # fractions: pair them up
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
