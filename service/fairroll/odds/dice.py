"""Exact odds of a dice formula: the distribution of its total.

Every part of a formula has a distribution, kept as whole-number weights over a
common total (``{3: 1, 4: 3, ...}`` of 216 for 3d6), so nothing is rounded:

- a die's faces weigh 1 each of ``sides``; a reroll reweighs them (``ro`` once:
  a matching face keeps ``m/s`` of itself, every face gains ``m/s²``; ``r`` as many
  times as counted: the same, summed as a geometric series, exactly);
- one die and its explosions is a *chain*: built from the last die counted outwards
  (which stands whatever it shows at the VTT's limit, or, counted short, is left out
  where it would go on), each die either stops or adds the chain after it (where many
  faces explode, as one power and one division instead: :mod:`fairroll.odds.dice_chain`);
  how deep a die is counted, and what is left out, is :data:`EPSILON`'s, or the
  answer's size's (:data:`MAX_ANSWER_BYTES`); the weights then add up to less than
  their total, through every step below;
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
from typing import Any

from fairroll.odds.dice_chain import chain
from fairroll.odds.dice_sums import (
    MAX_OUTCOMES,
    WORK_BUDGET_MS,
    Dist,
    Weights,
    Work,
    as_key,
    convolved,
    kept_sum,
    paired,
    powered,
    slot_bits,
)
from fairroll.rules.dice import MAX_HELD_DICE, VTT_LIMITS, DiceTerm, Node, ParsedFormula
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

__all__ = [
    "EPSILON",
    "MAX_ANSWER_BYTES",
    "MAX_OUTCOMES",
    "WORK_BUDGET_MS",
    "Work",
    "formula_odds",
]

#: The most a formula's odds leave uncounted. A die's rerolls and explosions are counted
#: until what goes on further weighs less than its term's share of this, or to its VTT's
#: limit (where the last die stands, exactly as the VTT rolls it), or as deep as
#: fairroll's limit of dice a roll holds lets every die go, whichever comes first. What
#: is left is not spread over the totals: the weights add up to less than the total,
#: and the answer's last bar (``beyond``) holds the rest, exactly.
EPSILON = Fraction(1, 10**12)

#: The most an odds answer of exploding dice may weigh, in bytes of JSON: a die's
#: explosions are counted no deeper than keeps its term's answer within it (and within
#: :data:`MAX_OUTCOMES` totals), the rest left beyond. The size is reckoned from above:
#: every bar's fraction as long as the term's total out of which it is, both ways.
MAX_ANSWER_BYTES = 16_000_000
#: The most a bar weighs in JSON besides its fraction's digits (outcome, label, float).
BAR_BYTES = 100


def formula_odds(formula: ParsedFormula, work: Work | None = None) -> Dist:
    """The exact distribution of a formula's total: ``(total, {value: weight})``, where
    ``weight / total`` is each value's probability (``work``: the budget it is charged to).
    Where a die's rerolls or explosions were counted short of its VTT's limit (see
    :data:`EPSILON`), the weights add up to less than ``total`` and ``work.cuts`` says
    where; the rest is the chance of what was not counted."""
    work = work or Work(formula.text)
    work.floats = formula.dialect == "avrae"
    work.depths = _Depths(formula)
    total, weights = _node(formula.tree, work)
    if formula.dialect == "avrae":  # d20's total is int() of its value
        weights = _mapped(weights, math.trunc)
    # Writing each probability out (a reduced fraction, its float) is paid for too.
    work.spend(len(weights) * (4 + total.bit_length() / 200), "writing the answer")
    return total, weights


def _node(node: Node, work: Work) -> Dist:
    kind = node.kind
    if kind == "const":
        if work.floats and node.fraction is not None:
            return 1, {float(node.fraction): 1}
        return 1, {as_key(node.number): 1}
    if kind == "term":
        return _term(node.dice, work)
    if kind == "group":
        return _group(node, work)
    parts = [_node(p, work) for p in node.parts]
    if kind in ("max", "min"):
        pick = max if kind == "max" else min
        result = parts[0]
        for part in parts[1:]:
            result = paired(result, part, pick, work)
        return result
    if kind in _UNARY:
        total, weights = parts[0]
        return total, _mapped(weights, _UNARY[kind])
    a, b = parts
    if kind == "add":
        return convolved(a, b, work)
    if kind == "sub":
        return convolved(a, (b[0], _mapped(b[1], lambda v: -v)), work)
    if kind == "mul" and all(type(v) is int for v in (*a[1], *b[1])):
        return _product(a, b, work)
    if work.floats and kind in _PYTHON:
        return paired(a, b, _PYTHON[kind], work)
    return paired(a, b, _binary(node), work)


#: avrae's operations on Python's numbers, as d20 makes them (``/`` of ints is a float).
_PYTHON: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "idiv": lambda x, y: x // y,
    "mod": lambda x, y: x % y,
}


def _product(a: Dist, b: Dist, work: Work) -> Dist:
    """The product of two whole-valued parts: every pair, without a call per pair."""
    (ta, wa), (tb, wb) = a, b
    work.spend(len(wa) * len(wb) * (0.1 + slot_bits(ta * tb) / 20_000), "a product")
    out: Weights = {}
    get = out.get
    right = list(wb.items())
    for x, p in wa.items():
        for y, q in right:
            k = x * y
            out[k] = get(k, 0) + p * q
        if len(out) > MAX_OUTCOMES:  # refused as soon as it is known, not after every pair
            work.outcomes(len(out), at_least=True)
    work.outcomes(len(out))
    return ta * tb, out


def _mapped(weights: Weights, f: Callable[[Any], Any]) -> Weights:
    out: Weights = {}
    for v, w in weights.items():
        k = as_key(f(v))
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
    if not any(isinstance(m, Explode) and m.mode != "once" for m in term.modifiers):
        # (a term that explodes has the totals of the depth it is counted to, below)
        low, high = term.bounds()
        work.outcomes(high - low + 1)
    total, weights = _dice(term, work)
    margin = term.margin
    if margin is None:
        return total, weights
    above, target = margin
    return total, _mapped(weights, (lambda v: v - target) if above else (lambda v: target - v))


def _dice(term: DiceTerm, work: Work) -> Dist:
    plan = _plan(term, work)
    if plan.explode is not None:
        chain = _chain(plan, work)
        if plan.compound:
            # Roll20's !!: the chain is one die, kept or counted as a whole.
            plan.value = plan.counted
            return _pool(term, plan, chain, work)
        if plan.add_one is not None:
            raise _Refusal(term)("an explosion and a reroll-and-add")
        if plan.grown is not None:
            return _grown_keep(term, plan, work)
        return powered(chain, term.count, work)
    return _pool(term, plan, plan.first, work)


def _pool(term: DiceTerm, plan: _Plan, die: Dist, work: Work) -> Dist:
    """``count`` independent dice of distribution ``die``: added, kept or counted."""
    die_total, weights = die
    if plan.select is not None:
        return kept_sum(term.count, plan.select, die_total, weights, plan.value, work)
    if plan.add_one is not None:
        return _add_one(term.count, die, plan, work)
    return powered((die_total, _mapped(weights, plan.value)), term.count, work)


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
        self.depth = 0
        #: Whether the last die of a chain stands whatever it shows (the VTT's limit), or
        #: the chain was counted short and a last die that goes on is left uncounted.
        self.stands = True
        self.select: tuple[int, bool] | None = None
        self.value: Callable[[Any], Any] = _same
        self.counted: Callable[[Any], Any] = _same
        self.add_one: Reroll | None = None
        #: A keep among every die a pool's explosions grew it to: how many, and whether
        #: the highest.
        self.grown: tuple[int, bool] | None = None


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


def _plan(term: DiceTerm, work: Work) -> _Plan:  # noqa: PLR0915  (a branch per kind of modifier)
    plan = _Plan()
    raw: Dist = (len(term.faces), dict.fromkeys(term.faces, 1))
    die = raw
    stage = 0  # 0: rerolls and minimums, 1: exploded, 2: kept
    held = 1  # the most dice a first die holds with its rerolls
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
            depth, stands = _reroll_depth(term, die, raw, m, work)
            die = _reroll(die, raw, m, depth, work, stands=stands)
            held *= 1 + depth
        elif isinstance(m, Clamp):
            if term.dialect == "foundry" or (stage == 2 and not after):
                # Foundry's min/max change what a die counts, not the face that later
                # modifiers compare; after a keep, each kept die's value (both dialects).
                after.append(m)
            elif stage == 0 and not after and plan.add_one is None:
                die = (die[0], _mapped(die[1], _clamp(m)))
            elif stage == 2:
                raise refuse("a minimum or maximum after a keep and a count")
            else:
                after.append(m)
        elif isinstance(m, Explode):
            if stage > 0 or after or plan.add_one is not None:
                raise refuse("an explosion after another, a keep or a count")
            plan.explode = m
            plan.compound = m.mode == "compound"
            plan.penetrate = m.mode == "penetrate"
            if m.mode == "once":
                plan.depth = 1
            else:
                extra = die if not term.pool else raw
                plan.depth, plan.stands = _explode_depth(term, die, extra, m, held, work)
            stage = 1
        elif isinstance(m, Select):
            if m.how == "test":
                after.append(m)
                continue
            if plan.select is not None or any(isinstance(x, Select) for x in after):
                raise refuse("two keeps")
            if plan.explode is not None and not plan.compound:
                # Keeping among the dice the explosions added (Roll20's 4d6!k3): see
                # _grown_keep for the forms it takes.
                if not m.keep or (m.how != "h" and m.n > term.count) or after:
                    raise refuse("keeping dice of a pool its explosions grow")
                plan.grown = (m.n, m.how == "h")
                stage = 2
                continue
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
    if plan.explode is not None and plan.explode.mode != "once":
        _fit_answer(term, plan, work)
    return plan


def _fit_answer(term: DiceTerm, plan: _Plan, work: Work) -> None:
    """Counts a term's explosions no deeper than keeps its answer within
    :data:`MAX_OUTCOMES` totals and :data:`MAX_ANSWER_BYTES` (``1d100!>2``: each die goes
    on 99 times in 100, to the VTT's limit; counted that deep, a hundred thousand totals
    of 2,000 digits each). The depth it comes to is a cut like any other: said in
    ``work.cuts``, the rest beyond."""
    depth = plan.depth
    firsts = [float(plan.value(f)) for f in plan.first[1]]
    extras = [float(plan.value(f - 1 if plan.penetrate else f)) for f in plan.extra[1]]
    low, high = min(0.0, *extras), max(0.0, *extras)
    first_digits = math.log10(plan.first[0])
    extra_digits = math.log10(plan.extra[0])
    n = term.count

    def fits(d: int) -> bool:
        width = n * (max(firsts) - min(firsts) + d * (high - low)) + 1
        digits = n * (first_digits + d * extra_digits) + 2
        return width <= MAX_OUTCOMES and width * (2 * digits + BAR_BYTES) <= MAX_ANSWER_BYTES

    if fits(depth):
        return
    most = 0  # the deepest that fits, found by halving (a deeper count is never smaller)
    fewest = depth
    while fewest - most > 1:
        middle = (most + fewest) // 2
        if fits(middle):
            most = middle
        else:
            fewest = middle
    work.cuts = [c for c in work.cuts if c[:2] != (term.text, "explosions")]
    work.cuts.append((term.text, "explosions", most))
    plan.depth = most
    plan.stands = False


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


def _reroll(die: Dist, raw: Dist, m: Reroll, depth: int, work: Work, *, stands: bool) -> Dist:
    """``die`` after a reroll of its matching faces: a rerolled die is a fresh raw die,
    rerolled again (``until``) while it matches, up to ``depth`` rerolls: there the last
    face stands (``stands``: the VTT's limit), or a die that still matches is left
    uncounted (its weight left out)."""
    limit = 1 if m.mode == "once" else depth
    work.spend(limit * (1 + slot_bits(raw[0] ** limit) / 2_000), "a reroll")
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
    if stands or m.mode == "once":
        fresh = {v: (0 if test(v) else stops) + last for v in faces}
    else:
        fresh = {v: 0 if test(v) else stops + last for v in faces}
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


class _Depths:
    """How deep a formula's odds count each die: its share of the dice a roll may hold
    (the fewest of fairroll's limit and a limit its VTT's roller shares among the dice),
    and each term's share of :data:`EPSILON`."""

    def __init__(self, formula: ParsedFormula) -> None:
        limits = VTT_LIMITS[formula.dialect]
        adds = sum(
            1
            for t in formula.terms
            for m in t.modifiers
            if isinstance(m, Reroll) and m.mode == "add"
        )
        dice = max(1, sum(t.count for t in formula.terms) + adds)
        shared = [x for x in (limits.checked, limits.rolled) if x is not None]
        #: No path the odds count holds more dice than a roll may (fairroll refuses it)
        #: or than the VTT's shared limit lets it roll (where the VTT would stop it).
        self.per_die = max(1, min([MAX_HELD_DICE, *shared]) // dice)
        self.share = EPSILON / max(1, len(formula.terms))
        #: The VTT's limit stops each die alone (Roll20), or the formula has one die, so
        #: its shared limit is the die's own (avrae: the die and 999 more).
        self.alone = not shared or dice == 1
        self.limits = limits


def _sources(term: DiceTerm) -> int:
    """The modifiers of a term that may go on (rerolls until, explosions): each has its
    share of the term's dice and of its :data:`EPSILON`."""
    return sum(
        1
        for m in term.modifiers
        if (isinstance(m, Reroll) and m.mode == "until")
        or (isinstance(m, Explode) and m.mode != "once")
    )


def _depth(dice: int, first: Fraction, again: Fraction, share: Fraction, most: int) -> int:
    """The fewest steps ``d`` (at most ``most``) such that ``dice`` dice, each going on
    past ``d`` steps with chance ``first * again**d``, weigh at most ``share``."""
    if first == 0 or dice * first <= share:
        return 0
    if share == 0 or again == 1:  # (nothing may be left out, or every die goes on)
        return most
    if again == 0:
        return min(1, most)
    d = 0
    if again < 1:  # a first guess from logarithms, then exact
        guess = math.log(float(share / (dice * first))) / math.log(float(again))
        d = max(0, min(most, int(guess) - 1))
    while d < most and dice * first * again**d > share:
        d += 1
    return d


def _chance(weights: Weights, total: int, test: Callable[[Any], bool]) -> Fraction:
    return Fraction(sum(w for v, w in weights.items() if test(v)), total)


def _reroll_depth(term: DiceTerm, die: Dist, raw: Dist, m: Reroll, work: Work) -> tuple[int, bool]:
    """How many rerolls of one die the odds count, and whether the last face then stands
    (the VTT's limit) rather than going on uncounted."""
    if m.mode == "once":
        return 1, True
    depths: _Depths = work.depths
    sources = max(1, _sources(term))
    if not term.pool and sources > 1:  # Roll20 rerolls each die of a chain
        most = math.isqrt(depths.per_die) - 1
    else:
        most = depths.per_die // sources - 1
    most = max(1, most)
    vtt = depths.limits.depth if depths.alone else None
    if vtt is not None:
        most = min(most, vtt)
    first = _chance(die[1], die[0], m.test)
    again = _chance(raw[1], raw[0], m.test)
    depth = max(1, _depth(term.count, first, again, depths.share / sources, most))
    stands = depth == vtt
    if not stands and first:
        work.cuts.append((term.text, "rerolls", depth))
    return depth, stands


def _explode_depth(
    term: DiceTerm, die: Dist, extra: Dist, m: Explode, held: int, work: Work
) -> tuple[int, bool]:
    """How many explosions of one die the odds count, and whether the last die then
    stands (the VTT's limit) rather than going on uncounted. ``held``: the most dice a
    first die holds with its rerolls (Roll20 rerolls each die of a chain alike; a pool's
    extra dice are rolled afresh)."""
    depths: _Depths = work.depths
    sources = max(1, _sources(term))
    most = depths.per_die // held - 1 if not term.pool else depths.per_die - held
    most = max(0, most)
    vtt = depths.limits.depth if depths.alone else None
    if vtt is not None:
        most = min(most, vtt)
    first = _chance(die[1], die[0], m.test)
    again = _chance(extra[1], extra[0], m.test)
    depth = _depth(term.count, first, again, depths.share / sources, most)
    stands = depth == vtt
    if not stands and first:
        work.cuts.append((term.text, "explosions", depth))
    return depth, stands


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
        if after is None:  # the last die allowed stands, or goes on uncounted
            if not plan.stands:
                weights = {f: w for f, w in weights.items() if not explode.test(f)}
            return total, _mapped(weights, lambda f: counted(f, depth))
        goes_on: Weights = {}
        stops: Weights = {}
        for face, w in weights.items():
            target = goes_on if explode.test(face) else stops
            k = as_key(counted(face, depth))
            target[k] = target.get(k, 0) + w
        summed = convolved((total, goes_on), after, work) if goes_on else (total * after[0], {})
        out = dict(summed[1])
        for k, w in stops.items():
            out[k] = out.get(k, 0) + w * after[0]
        return total * after[0], out

    if plan.depth == 0:
        return level(plan.first, 0, None)
    total, weights = plan.extra
    goes = [face for face in weights if explode.test(face)]
    if len(goes) == 1:  # one face explodes (d6!): the chain after the first die, at once
        return level(plan.first, 0, _tail(plan, goes[0], counted, work))
    # Several faces explode: the chain as one division (dice_chain), where its values
    # allow; else one level at a time, each as wide as the ones after it.
    divided = _divided(plan, counted, work)
    if divided is not None:
        return divided
    span = max(weights) - min(weights) + 1
    levels = plan.depth * (plan.depth + 1) // 2
    work.spend(
        levels * len(goes) * span * (0.2 + plan.depth * total.bit_length() / 40_000), "a chain"
    )
    chain: Dist | None = None
    for depth in range(plan.depth, 0, -1):
        chain = level(plan.extra, depth, chain)
    return level(plan.first, 0, chain)


def _divided(plan: _Plan, counted: Callable[[Any, int], Any], work: Work) -> Dist | None:
    """The chain by :func:`fairroll.odds.dice_chain.chain`: each die's faces split into
    the values that go on and those that stop (the first die's as it counts them, the
    dice after it as they do)."""
    explode = plan.explode
    if explode is None:
        raise TypeError("a chain needs an explosion")

    def split(die: Dist, depth: int) -> tuple[int, Weights, Weights]:
        goes: Weights = {}
        stops: Weights = {}
        for face, w in die[1].items():
            target = goes if explode.test(face) else stops
            k = as_key(counted(face, depth))
            target[k] = target.get(k, 0) + w
        return die[0], goes, stops

    same = plan.first == plan.extra and not plan.penetrate
    return chain(
        first=split(plan.first, 0),
        extra=split(plan.extra, 1),
        same=same,
        depth=plan.depth,
        stands=plan.stands,
        work=work,
    )


def _tail(plan: _Plan, face: Any, counted: Callable[[Any, int], Any], work: Work) -> Dist:
    """The dice a chain's explosions add, from the first extra die to the last allowed,
    where one face explodes (worth ``v``, of weight ``a`` out of ``s``): the ``i``-th die
    stops on a face ``x`` (weight ``w``) after ``i`` explosions, worth ``i * v + x``, of
    weight ``a**i * w * s**(depth - 1 - i)``; the last die allowed stands whatever it
    shows (or, a chain counted short, goes on uncounted). The same sum the level-by-level
    build makes, without its convolutions."""
    total, weights = plan.extra
    depth = plan.depth
    a = weights[face]
    v = counted(face, 1)
    stops = [(counted(f, 1), w) for f, w in weights.items() if f != face]
    last = [(counted(f, 1), w) for f, w in weights.items()]
    work.spend(depth * len(last) * (0.3 + depth * total.bit_length() / 20_000), "a chain")
    out: Weights = {}
    for i in range(depth):
        ending = last if i == depth - 1 and plan.stands else stops
        scale = a**i * (total ** (depth - 1 - i) if i < depth - 1 else 1)
        for x, w in ending:
            k = as_key(i * v + x)
            out[k] = out.get(k, 0) + scale * w
    work.outcomes(len(out))
    return total**depth, out


def _grown_keep(term: DiceTerm, plan: _Plan, work: Work) -> Dist:
    """Keeping the ``k`` highest (or lowest) of every die a pool of exploding dice rolled
    (``4d6!k3``), where every face that explodes is above every face that does not, and
    a die counts its face. Each chain is then some dice that exploded, each showing an
    exploding face, and one that stopped, below all of them. With ``x`` explosions in
    all (the ``x``-th power of the chains' explosions counted, as a polynomial): the
    ``k`` highest are the ``k`` highest exploded dice, or all ``x`` and the ``k - x``
    highest stopped dice; the ``k`` lowest are the ``k`` lowest stopped dice. A chain
    that went on past its depth is left out (counted as not counted), and a last die
    that stands whatever it shows is not taken (it may show an exploding face)."""
    refuse = _Refusal(term)
    explode = plan.explode
    grown = plan.grown
    if explode is None or grown is None:
        raise TypeError("a grown keep needs an explosion and a keep")
    k, highest = grown
    total, weights = plan.extra
    going = {f: w for f, w in weights.items() if explode.test(f)}
    stopping = {f: w for f, w in weights.items() if not explode.test(f)}
    if (
        plan.first != plan.extra
        or plan.penetrate
        or plan.stands
        or not stopping
        or max(stopping) >= min(going)
        or (not highest and k > term.count)
    ):
        raise refuse("keeping dice of a pool its explosions grow")
    n, depth = term.count, plan.depth
    a, b = sum(going.values()), sum(stopping.values())
    # Each chain padded to depth + 1 dice: j explosions, then a stopping die.
    chain = {j: a**j * b * total ** (depth - j) for j in range(depth + 1)}
    explosions = powered((total ** (depth + 1), chain), n, work)[1]
    work.spend(len(explosions) * k * (1 + len(weights)), f"keeping {k} of a grown pool")
    out: Weights = {}

    def add(scale: int, dist: Dist) -> None:
        for v, w in dist[1].items():
            out[v] = out.get(v, 0) + scale * w

    if not highest:  # the k lowest: stopped dice, whatever exploded
        counted = sum(explosions.values())
        add(counted // b**n, kept_sum(n, (k, False), b, stopping, _same, work))
    else:
        for x, c in explosions.items():
            if x >= k:
                add(c // a**x, kept_sum(x, (k, True), a, going, _same, work))
            else:
                them = powered((a, going), x, work) if x else (1, {0: 1})
                rest = kept_sum(n, (min(k - x, n), True), b, stopping, _same, work)
                add(c // (a**x * b**n), convolved(them, rest, work))
    work.outcomes(len(out))
    return total ** ((depth + 1) * n), out


def _add_one(count: int, die: Dist, plan: _Plan, work: Work) -> Dist:
    """avrae's ``ra``: the first die of the pool that matches rolls one more, added."""
    m = plan.add_one
    if m is None:
        raise TypeError("no reroll-and-add to add")
    total, weights = die
    value = plan.value
    every = powered((total, _mapped(weights, value)), count, work)
    missing = {v: w for v, w in weights.items() if not m.test(v)}
    none: Dist = powered((total, _mapped(missing, value)), count, work) if missing else (0, {})
    some = {v: w - none[1].get(v, 0) for v, w in every[1].items()}
    some = {v: w for v, w in some.items() if w}
    extra_faces = plan.extra[1]
    extra: Dist = (len(extra_faces), _mapped(dict.fromkeys(extra_faces, 1), value))
    out: Weights = {}
    if some:
        out.update(convolved((every[0], some), extra, work)[1])
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
        n = max(0, min(term.count, select.n if select.keep else term.count - select.n))
        faces: Weights = dict.fromkeys(term.faces, 1)
        chosen = (n, (select.how == "h") == select.keep)
        return kept_sum(term.count, chosen, len(term.faces), faces, _same, work)
    members = [_node(p, work) for p in node.parts]
    if how.count is not None and how.count.test is not None:
        test = how.count.test
        sign = -1 if how.count.kind == "failure" else 1
        result: Dist = (1, {0: 1})
        failure = how.failure.test if how.failure is not None else None
        for total, weights in members:
            hit = sum(w for v, w in weights.items() if test(v))
            miss = sum(w for v, w in weights.items() if failure and not test(v) and failure(v))
            each: Weights = {0: sum(weights.values()) - hit - miss}
            each[sign] = each.get(sign, 0) + hit
            each[-1] = each.get(-1, 0) + miss
            result = convolved(result, (total, {v: w for v, w in each.items() if w}), work)
        return result
    if how.select is None:
        result = (1, {0: 1})
        for member in members:
            result = convolved(result, member, work)
        return result
    select = how.select
    keep = max(0, min(len(members), select.n if select.keep else len(members) - select.n))
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
        k = as_key(sum(state, Fraction(0)))
        out[k] = out.get(k, 0) + w
    return grand, out
