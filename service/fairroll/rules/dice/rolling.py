"""Rolling a parsed formula: each term's dice as its dialect rolls them, then the arithmetic.

Two orders of rolling, as the dialects document them:

- **die by die** (Roll20, fairroll's reading of today): each die is rolled with its
  rerolls and its explosions before the next die, and the modifiers apply in one fixed
  order whatever their order in the text (rerolls, explosions, keep/drop, counting);
- **pool by pool** (Foundry VTT, avrae): every die of the term is rolled first, then
  each modifier runs over the pool as it stands, in the order written. A die a
  modifier adds goes to the end of the pool (Foundry: rerolls and explosions; avrae:
  explosions), or in the place of the die it rerolls (avrae: a die keeps its place,
  as in d20). Supplied dice are taken in the order the dice are rolled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import msgspec

from fairroll.randomness import DiceSource, Die
from fairroll.rules.dice.limits import MAX_HELD_DICE, VTT_LIMITS, VttLimits, error
from fairroll.rules.dice.model import (
    Clamp,
    Count,
    DiceTerm,
    Explode,
    Group,
    Match,
    Node,
    ParsedFormula,
    Reroll,
    Select,
)
from fairroll.rules.dice.outcome import FormulaOutcome, GroupOutcome, RolledDie, TermOutcome
from fairroll.rules.errors import RuleError

__all__ = ["PoolDie", "clamp_pool", "foundry_count", "js_round", "roll_formula", "whole"]


def roll_formula(formula: ParsedFormula, dice: DiceSource) -> FormulaOutcome:
    """Roll every term in order, then evaluate the tree (groups pick among what rolled).
    A roll that would hold more than :data:`MAX_HELD_DICE` dice is refused at the first
    die past it."""
    held = _Held(dice)
    rolled: dict[int, TermOutcome] = {}
    budget = _Budget(VTT_LIMITS[formula.dialect].rolled)
    for term in formula.terms:
        if term.pool:
            rolled[id(term)] = _roll_pool(term, held, budget)
        else:
            rolled[id(term)] = _roll_die_by_die(term, held)
    groups: list[GroupOutcome] = []
    if formula.dialect == "avrae":
        # d20 reckons in Python's numbers (a decimal is a float: 0.57*100 is
        # 56.99999999999999), and its total is int() of the value.
        total = Fraction(int(_evaluate_avrae(formula.tree, rolled, groups)))
    else:
        total = _evaluate(formula.tree, rolled, groups)
    return FormulaOutcome(
        total=whole(total),
        label=formula.label,
        terms=tuple(rolled[id(t)] for t in formula.terms),
        groups=tuple(groups) if groups else msgspec.UNSET,
    )


class _Held:
    """A dice source that counts the dice a roll holds, and refuses the first past
    fairroll's limit: an entry holds every die twice, so a roll of ``100d1000!>2`` (some
    64,000 dice, ~7 MB) is not recorded. The dice follow from the seed (or the faces
    supplied), so the same request is refused again: a refusal cannot be retried into
    another outcome."""

    __slots__ = ("held", "source")

    def __init__(self, source: DiceSource) -> None:
        self.source = source
        self.held = 0

    @property
    def dice(self) -> tuple[Die, ...]:
        return self.source.dice

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        self.held += count
        if self.held > MAX_HELD_DICE:
            raise error(
                0,
                f"this roll holds more than {MAX_HELD_DICE} dice with its rerolls and "
                f"explosions; fairroll records at most {MAX_HELD_DICE} dice a roll (its "
                "limit of dice held, docs/rules/dice.md). Its dice follow from its seed "
                "(or the faces supplied), so the same request is refused again; nothing "
                "was recorded",
            )
        return self.source.roll(group, sides, count)


def whole(value: Fraction) -> int | float:
    """A total as JSON gives it: an integer, or the nearest float to a fraction."""
    return value.numerator if value.denominator == 1 else float(value)


def js_round(value: Fraction) -> int:
    """JavaScript's ``Math.round``, which Roll20 and Foundry use: halves go up."""
    return math.floor(value + Fraction(1, 2))


# ---------------------------------------------------------------------------------------
# Die by die (Roll20)


def _roll_die_by_die(term: DiceTerm, dice: DiceSource) -> TermOutcome:
    group, sides, offset = term.group, term.sides, term.shift
    reroll = next((m for m in term.modifiers if isinstance(m, Reroll)), None)
    explode = next((m for m in term.modifiers if isinstance(m, Explode)), None)
    select = next((m for m in term.modifiers if isinstance(m, Select)), None)
    counts = [m for m in term.modifiers if isinstance(m, Count)]
    rolled: list[RolledDie] = []
    depth_limit = VTT_LIMITS[term.dialect].depth
    stopped: list[str] = []

    def one() -> int:
        """A die with its rerolls; the rerolled faces are kept in the record."""
        value = dice.roll(group, sides)[0] + offset
        if reroll is not None:
            limit = 1 if reroll.mode == "once" else depth_limit
            for _ in range(limit):
                if not reroll.test(value):
                    break
                rolled.append(RolledDie(value=value, rerolled=True))
                value = dice.roll(group, sides)[0] + offset
            else:
                if reroll.mode != "once" and reroll.test(value):
                    stopped.append("rerolls")  # the VTT's limit: the last face stands
        return value

    # Each standing die: its index in ``rolled`` and what it is worth (a compounded die
    # is worth its whole chain, and its chain's faces share its fate).
    standing: list[tuple[int, int, list[int]]] = []
    for _ in range(term.count):
        value = one()
        depth = 0
        chain: list[int] = []
        worth = value
        while explode is not None and explode.test(value) and depth < depth_limit:
            if explode.mode == "compound":
                chain.append(len(rolled))
                rolled.append(RolledDie(value=value, exploded=True, compounded=True))
            else:
                standing.append((len(rolled), rolled_value(value, depth, explode), []))
                rolled.append(_face(value, depth, explode, exploded=True))
            value = one()
            worth += value
            depth += 1
        if explode is not None and depth == depth_limit and explode.test(value):
            stopped.append("explosions")  # the VTT's limit: the last die stands
        index = len(rolled)
        rolled.append(_face(value, depth, explode))
        if explode is not None and explode.mode == "compound":
            standing.append((index, worth, chain))
        else:
            standing.append((index, rolled_value(value, depth, explode), []))
    kept = standing if select is None else _roll20_keep(select, standing, rolled)
    successes = _roll20_successes(term, counts, kept, rolled)
    return TermOutcome(
        text=term.text,
        offset=term.offset,
        sides=sides,
        fate=term.fate,
        value=successes if successes is not None else sum(worth for _, worth, _ in kept),
        successes=successes,
        dice=tuple(rolled),
        stopped=_stopped(stopped),
    )


def _stopped(stopped: list[str]) -> Any:
    """The limit that stopped a term's dice, where one did (the first to)."""
    return stopped[0] if stopped else msgspec.UNSET


class _Budget:
    """The dice an avrae roll may still roll: d20 fails a roll past its limit; fairroll
    rolls no more, and the die that would have rerolled or exploded stands."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit


def _roll20_keep(
    select: Select, standing: list[tuple[int, int, list[int]]], rolled: list[RolledDie]
) -> list[tuple[int, int, list[int]]]:
    """Roll20's keep and drop among the standing dice; a dropped die's chain is dropped."""
    high = select.how == "h"
    n = max(0, select.n if select.keep else len(standing) - select.n)
    keep_high = high if select.keep else not high
    order = sorted(standing, key=lambda s: (-s[1] if keep_high else s[1], s[0]))
    chosen = {s[0] for s in order[:n]}
    for index, _, chain in standing:
        if index not in chosen:
            for i in (*chain, index):
                rolled[i] = msgspec.structs.replace(rolled[i], dropped=True)
    return [s for s in standing if s[0] in chosen]


def _roll20_successes(
    term: DiceTerm,
    counts: list[Count],
    kept: list[tuple[int, int, list[int]]],
    rolled: list[RolledDie],
) -> int | None:
    """What a counting Roll20 term is worth: its successes, or its matches (``mt``)."""
    successes = _roll20_count(counts, kept, rolled) if counts else None
    match = next((m for m in term.modifiers if isinstance(m, Match)), None)
    if match is not None and match.total:
        return _matches(match, [worth for _, worth, _ in kept])
    return successes


def _matches(match: Match, values: list[int]) -> int:
    """Roll20's matches: the faces shown by at least ``n`` of the dice that count."""
    shown: dict[int, int] = {}
    for v in values:
        if match.test is None or match.test(v):
            shown[v] = shown.get(v, 0) + 1
    return sum(1 for n in shown.values() if n >= match.n)


def _roll20_count(
    counts: list[Count], kept: list[tuple[int, int, list[int]]], rolled: list[RolledDie]
) -> int:
    """Roll20's successes (``>N``) less its failures (``fN``), marked on the dice."""
    success = next((c.test for c in counts if c.kind == "success"), None)
    failure = next((c.test for c in counts if c.kind == "failure"), None)
    tally = 0
    for index, worth, chain in kept:
        met = success is not None and success(worth)
        missed = not met and failure is not None and failure(worth)
        tally += int(met) - int(missed)
        for i in (*chain, index):
            changes: dict[str, object] = {"success": met}
            if missed:
                changes["failure"] = True
            rolled[i] = msgspec.structs.replace(rolled[i], **changes)
    return tally


def rolled_value(face: int, depth: int, explode: Explode | None) -> int:
    """What a die of an explosion chain counts: a penetrating die after the first, one less."""
    if explode is not None and explode.mode == "penetrate" and depth > 0:
        return face - 1
    return face


def _face(face: int, depth: int, explode: Explode | None, *, exploded: bool = False) -> RolledDie:
    value = rolled_value(face, depth, explode)
    if value != face:
        return RolledDie(value=value, exploded=exploded, face=face)
    return RolledDie(value=value, exploded=exploded)


# ---------------------------------------------------------------------------------------
# Pool by pool (Foundry VTT, avrae)


class PoolDie:
    """One die of a pool as the modifiers see it."""

    __slots__ = (
        "count",
        "depth",
        "dropped",
        "exploded",
        "face",
        "failure",
        "rerolled",
        "rerolls",
        "success",
        "value",
    )

    def __init__(self, face: int, depth: int = 0, rerolls: int = 0) -> None:
        self.face = self.value = face
        self.depth = depth
        self.rerolls = rerolls
        self.rerolled = self.exploded = self.dropped = False
        self.success: bool | None = None
        self.failure = False
        self.count: int | None = None

    @property
    def active(self) -> bool:
        return not (self.rerolled or self.dropped)

    @property
    def worth(self) -> int:
        """What the die adds to its term: its count where a modifier set one."""
        return self.count if self.count is not None else self.value


def _roll_pool(term: DiceTerm, dice: DiceSource, budget: _Budget) -> TermOutcome:
    group, sides, offset = term.group, term.sides, term.shift
    limits = _Limits(VTT_LIMITS[term.dialect], budget)

    def roll(depth: int = 0, rerolls: int = 0) -> PoolDie:
        if budget.left is not None:
            budget.left -= 1
        return PoolDie(dice.roll(group, sides)[0] + offset, depth, rerolls)

    results = [roll() for _ in range(term.count)]
    avrae = term.dialect == "avrae"
    for modifier in term.modifiers:
        if isinstance(modifier, Reroll):
            _pool_reroll(results, modifier, roll, limits, avrae=avrae)
        elif isinstance(modifier, Explode):
            _pool_explode(results, modifier, roll, limits, avrae=avrae)
        elif isinstance(modifier, Clamp):
            clamp_pool(results, modifier, avrae=avrae)
        elif isinstance(modifier, Select):
            if avrae:
                _avrae_select(results, modifier)
            else:
                _foundry_keep(results, modifier)
        elif isinstance(modifier, Count):
            foundry_count(results, modifier)
    counting = any(isinstance(m, Count) and m.kind != "margin" for m in term.modifiers)
    value = sum(r.worth for r in results if r.active)
    margin = term.margin
    if margin is not None:  # Foundry's ms: on the term's total, not on each die
        value = value - margin[1] if margin[0] else margin[1] - value
    return TermOutcome(
        text=term.text,
        offset=term.offset,
        sides=sides,
        fate=term.fate,
        value=value,
        successes=value if counting else None,
        dice=tuple(_record(r, counting) for r in results),
        stopped=_stopped(limits.stopped),
    )


class _Limits:
    """A pool's VTT limits as its modifiers run: Foundry's results checked by each
    modifier, avrae's dice left in the roll, and which of them stopped a die."""

    def __init__(self, vtt: VttLimits, budget: _Budget) -> None:
        self.checked = vtt.checked
        self.budget = budget
        self.stopped: list[str] = []
        #: A VTT with no limit shared by the pool (none of today's) stops each die alone.
        self.depth = vtt.depth if vtt.checked is None and vtt.rolled is None else None

    def goes_on(self, times: int, kind: str = "explosions") -> bool:
        """Whether a die that has exploded (rerolled) ``times`` times may again."""
        if self.depth is not None and times >= self.depth:
            self.stopped.append(kind)
            return False
        return True

    def may_check(self, checked: int) -> bool:
        """Foundry throws once a modifier has checked more results than its limit."""
        if self.checked is not None and checked >= self.checked:
            self.stopped.append("checked")
            return False
        return True

    def may_roll(self) -> bool:
        """d20 fails a roll that rolls more dice than its limit."""
        if self.budget.left is not None and self.budget.left <= 0:
            self.stopped.append("rolled")
            return False
        return True


def clamp_pool(results: list[PoolDie], clamp: Clamp, *, avrae: bool) -> None:
    """avrae's ``mi``/``ma`` change the face of each die still kept, and what follows
    sees the new face (d20 forces the value). Foundry's ``min``/``max`` change what each
    result counts, and what follows still compares the face rolled (Foundry sets the
    result's count and leaves its result)."""
    for r in results:
        if avrae and not r.active:
            continue
        seen = r.value if avrae else r.face
        worth = seen if avrae or r.count is None else r.count
        if clamp.low is not None and seen < clamp.low:
            worth = clamp.low
        if clamp.high is not None and seen > clamp.high:
            worth = clamp.high
        if avrae:
            r.value = worth
        elif worth != seen or r.count is not None:
            r.count = worth


def _record(r: PoolDie, counting: bool) -> RolledDie:
    if not counting and r.count is not None:  # Foundry's min/max: the count is its value
        faced: dict[str, object] = {"face": r.face} if r.count != r.face else {}
        die = RolledDie(
            value=r.count,
            rerolled=r.rerolled,
            exploded=r.exploded,
            dropped=r.dropped,
            success=None,
        )
        return msgspec.structs.replace(die, **faced) if faced else die
    die = RolledDie(
        value=r.value,
        rerolled=r.rerolled,
        exploded=r.exploded,
        dropped=r.dropped,
        success=r.success if counting and r.success is not None else None,
    )
    changes: dict[str, object] = {}
    if r.face != r.value:
        changes["face"] = r.face
    if r.failure:
        changes["failure"] = True
    if counting and r.count is not None and r.count not in (0, 1):
        changes["count"] = r.count
    return msgspec.structs.replace(die, **changes) if changes else die


def _selected(results: list[PoolDie], test: Callable[[int], bool]) -> list[PoolDie]:
    return [r for r in results if r.active and test(r.value)]


def _ranked(results: list[PoolDie], how: str, n: int) -> list[PoolDie]:
    """avrae's ``hN``/``lN``: the highest (lowest) N kept dice; among equals, the earlier."""
    kept = [r for r in results if r.active]
    ordered = sorted(kept, key=lambda r: r.value, reverse=how == "h")
    return ordered[:n]


def _pool_reroll(
    results: list[PoolDie],
    modifier: Reroll,
    roll: Callable[[int, int], PoolDie],
    limits: _Limits,
    *,
    avrae: bool,
) -> None:
    if modifier.mode == "add":  # avrae's ra: the first matching die rolls one more
        first = _avrae_first(results, modifier)
        if first is not None and limits.may_roll():
            first.exploded = True
            results.append(roll(first.depth + 1, 0))
        return
    if avrae:
        # Every matching die is rerolled in turn; then the pool is looked at again (``rr``,
        # with no limit of its own but the roll's dice).
        while True:
            matching = [
                r for r in _avrae_chosen(results, modifier) if limits.goes_on(r.rerolls, "rerolls")
            ]
            if not matching:
                return
            for r in matching:
                if not limits.may_roll():
                    return
                # d20 rerolls a die in its place: the new face follows the old one.
                r.rerolled = True
                results.insert(results.index(r) + 1, roll(r.depth, r.rerolls + 1))
            if modifier.mode == "once":
                return
    # Foundry: one pass over the results, rerolled dice appended; ``rr`` goes on over them.
    checked, initial = 0, len(results)
    while checked < len(results) and limits.may_check(checked):
        r = results[checked]
        checked += 1
        if r.active and modifier.test(r.value) and limits.goes_on(r.rerolls, "rerolls"):
            r.rerolled = True
            results.append(roll(r.depth, r.rerolls + 1))
        if modifier.mode == "once" and checked == initial:
            break


def _pool_explode(
    results: list[PoolDie],
    modifier: Explode,
    roll: Callable[[int, int], PoolDie],
    limits: _Limits,
    *,
    avrae: bool,
) -> None:
    if avrae:
        done: set[int] = set()
        while True:
            matching = [
                r
                for r in _selected(results, modifier.test)
                if id(r) not in done and limits.goes_on(r.depth)
            ]
            if not matching:
                return
            for r in matching:
                if not limits.may_roll():
                    return
                r.exploded = True
                done.add(id(r))
                results.append(roll(r.depth + 1, 0))
    checked, initial = 0, len(results)
    while checked < len(results) and limits.may_check(checked):
        r = results[checked]
        checked += 1
        if r.active and modifier.test(r.value) and limits.goes_on(r.depth):
            r.exploded = True
            results.append(roll(r.depth + 1, 0))
        if modifier.mode == "once" and checked == initial:
            break


def _avrae_chosen(results: list[PoolDie], select: Select | Reroll) -> list[PoolDie]:
    """The dice an avrae operator selects: the union of its selectors' (d20 joins an
    operator written twice in a row into one), in pool order."""
    chosen: set[int] = set()
    for one in (select, *select.also):
        if isinstance(one, Select):
            rank = (one.how, one.n) if one.how != "test" else None
        else:
            rank = one.rank
        if rank is not None:
            chosen.update(id(r) for r in _ranked(results, *rank))
        elif one.test is not None:
            chosen.update(id(r) for r in _selected(results, one.test))
    return [r for r in results if id(r) in chosen]


def _avrae_first(results: list[PoolDie], reroll: Reroll) -> PoolDie | None:
    """avrae's ``ra`` takes one die: the first its first selector that selects any
    gives (the highest for ``h``, the first in the pool for a face)."""
    for one in (reroll, *reroll.also):
        found = _ranked(results, *one.rank) if one.rank else _selected(results, one.test)
        if found:
            return found[0]
    return None


def _avrae_select(results: list[PoolDie], select: Select) -> None:
    chosen = {id(r) for r in _avrae_chosen(results, select)}
    for r in results:
        if r.active and ((id(r) in chosen) != select.keep):
            r.dropped = True


def _foundry_keep(results: list[PoolDie], select: Select) -> None:
    """Foundry's keep and drop: a cut at the n-th value, ties discarded earliest first."""
    keep, highest = select.keep, select.how == "h"
    ascending = keep == highest
    values = sorted((r.value for r in results if r.active), reverse=not ascending)
    number = max(0, min(len(values) - select.n if keep else select.n, len(values)))
    if number == len(values):
        for r in results:
            if r.active:
                r.dropped = True
        return
    cut = values[number]
    discarded = 0
    ties = []
    for r in results:
        if not r.active:
            continue
        if (r.value < cut) if ascending else (r.value > cut):
            r.dropped = True
            discarded += 1
        elif r.value == cut:
            ties.append(r)
    for r in ties:
        if discarded < number:
            r.dropped = True
            discarded += 1


def foundry_count(results: list[PoolDie], count: Count) -> None:
    test = count.test
    for r in results:
        if count.kind == "success" and test is not None:
            r.success = test(r.value)
            r.count = int(r.success)
        elif count.kind == "failures" and test is not None:
            met = test(r.value)
            r.failure = met
            r.count = int(met)
        elif count.kind in ("even", "odd"):
            met = r.value % 2 == (0 if count.kind == "even" else 1)
            r.success = met
            r.count = int(met)
        elif count.kind in ("failure", "subtract"):
            failed = test(r.value) if test is not None else r.success is False
            if failed:
                r.failure = True
                r.success = None
                r.count = -1 if count.kind == "failure" else -r.value


# ---------------------------------------------------------------------------------------
# Arithmetic


def _evaluate(node: Node, rolled: dict[int, TermOutcome], groups: list[GroupOutcome]) -> Fraction:
    kind = node.kind
    if kind == "const":
        return node.number
    if kind == "term":
        return Fraction(rolled[id(node.term)].value)
    if kind == "group":
        return _group(node, rolled, groups)
    values = [_evaluate(p, rolled, groups) for p in node.parts]
    if kind == "neg":
        return -values[0]
    if kind == "floor":
        return Fraction(math.floor(values[0]))
    if kind == "ceil":
        return Fraction(math.ceil(values[0]))
    if kind == "round":
        return Fraction(js_round(values[0]))
    if kind == "abs":
        return abs(values[0])
    if kind in ("max", "min"):
        return max(values) if kind == "max" else min(values)
    a, b = values
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    if kind == "compare":
        return Fraction(int(_compare(a, node.op or "=", b)))
    if kind == "pow":  # Roll20's **, with a whole exponent of at least 0
        return a ** int(b)
    if b == 0:  # refused at parse where it can happen; a guard, not a path
        raise RuleError("formula: division by zero", field="formula")
    if kind == "div":
        return a / b
    if kind == "idiv":
        return Fraction(a // b)
    if kind == "rem":  # JavaScript's % (Foundry): the sign of the dividend
        return a - b * math.trunc(a / b)
    return a % b  # avrae's % is Python's: the sign of the divisor


def _evaluate_avrae(
    node: Node, rolled: dict[int, TermOutcome], groups: list[GroupOutcome]
) -> int | float:
    """avrae's arithmetic as d20 does it: Python's ints and floats, ``/`` a float."""
    kind = node.kind
    if kind == "const":
        return float(node.fraction) if node.fraction is not None else node.value
    if kind == "term":
        return rolled[id(node.term)].value
    if kind == "group":
        values = [_evaluate_avrae(p, rolled, groups) for p in node.parts]
        return _avrae_set(node, values, groups)
    values = [_evaluate_avrae(p, rolled, groups) for p in node.parts]
    if kind == "neg":
        return -values[0]
    a, b = values
    if kind == "compare":
        return int(_compare(a, node.op or "=", b))
    if kind in ("div", "idiv", "mod") and b == 0:
        raise RuleError("formula: division by zero", field="formula")  # refused at parse
    operations: dict[str, Callable[[Any, Any], int | float]] = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "idiv": lambda x, y: x // y,
        "mod": lambda x, y: x % y,
    }
    return operations[kind](a, b)


def _avrae_set(node: Node, values: list[int | float], groups: list[GroupOutcome]) -> int | float:
    """A d20 set: each operator keeps (drops) among the members still kept, by value; the
    same operator written twice in a row selects the union of its selectors."""
    how = node.how or Group()
    kept = [True] * len(values)
    for select in (how.select, *how.then) if how.select is not None else ():
        standing = [i for i in range(len(values)) if kept[i]]
        chosen: set[int] = set()
        for one in (select, *select.also):
            if one.how == "test" and one.test is not None:
                test = one.test
                chosen.update(i for i in standing if test(Fraction(values[i])))
            else:
                ordered = sorted(standing, key=lambda i: values[i], reverse=one.how == "h")
                chosen.update(ordered[: one.n])
        for i in standing:
            if (i in chosen) != select.keep:
                kept[i] = False
    groups.append(
        GroupOutcome(offset=node.offset, values=tuple(values), kept=tuple(kept), successes=None)
    )
    return sum(v for v, k in zip(values, kept, strict=True) if k)


def _compare(a: Fraction | float, op: str, b: Fraction | float) -> bool:
    return {
        "==": a == b,
        "=": a == b,
        "!=": a != b,
        ">=": a >= b,
        "<=": a <= b,
        ">": a > b,
        "<": a < b,
    }[op]


def _group(node: Node, rolled: dict[int, TermOutcome], groups: list[GroupOutcome]) -> Fraction:
    how = node.how or Group()
    if how.of_dice:
        (inner,) = node.parts
        _keep_group_dice(inner, how.select, rolled)
        value = _evaluate(inner, rolled, groups)
        values = [value]
        kept = [True]
    else:
        values = [_evaluate(p, rolled, groups) for p in node.parts]
        kept = [True] * len(values)
        if how.select is not None:
            select = how.select
            order = sorted(
                range(len(values)),
                key=lambda i: (-values[i] if select.how == "h" else values[i], i),
            )
            n = max(0, select.n if select.keep else len(values) - select.n)
            if not select.keep:
                # drop the n best (dh) or worst (dl): keep the others
                order = sorted(
                    range(len(values)),
                    key=lambda i: (values[i] if select.how == "h" else -values[i], i),
                )
            chosen = set(order[:n])
            kept = [i in chosen for i in range(len(values))]
    successes: int | None = None
    if how.count is not None and how.count.test is not None:
        test = how.count.test
        successes = sum(1 for v, k in zip(values, kept, strict=True) if k and test(v))
        if how.count.kind == "failure":
            successes = -successes
        failure = how.failure.test if how.failure is not None else None
        if failure is not None:  # Roll20: a failing sub-roll takes a success away
            successes -= sum(
                1 for v, k in zip(values, kept, strict=True) if k and not test(v) and failure(v)
            )
        total = Fraction(successes)
    else:
        total = sum((v for v, k in zip(values, kept, strict=True) if k), Fraction(0))
    groups.append(
        GroupOutcome(
            offset=node.offset,
            values=tuple(whole(v) for v in values),
            kept=tuple(kept),
            successes=successes,
        )
    )
    return total


def _term_nodes(node: Node) -> list[DiceTerm]:
    if node.kind == "term":
        return [node.dice]
    return [t for p in node.parts for t in _term_nodes(p)]


def _keep_group_dice(inner: Node, select: Select | None, rolled: dict[int, TermOutcome]) -> None:
    """Roll20's group of one sub-roll: keep/drop picks among all of its dice."""
    if select is None:
        return
    standing: list[tuple[int, int, int]] = []  # (value, term index, die index)
    terms = _term_nodes(inner)
    for t, term in enumerate(terms):
        for i, die in enumerate(rolled[id(term)].dice):
            if not (die.rerolled or die.dropped):
                standing.append((die.value, t, i))
    high = select.how == "h"
    n = max(0, select.n if select.keep else len(standing) - select.n)
    keep_high = high if select.keep else not high
    order = sorted(
        range(len(standing)), key=lambda k: (-standing[k][0] if keep_high else standing[k][0], k)
    )
    chosen = {standing[k][1:] for k in order[:n]}
    for t, term in enumerate(terms):
        outcome = rolled[id(term)]
        dice = list(outcome.dice)
        for i, die in enumerate(dice):
            if not (die.rerolled or die.dropped) and (t, i) not in chosen:
                dice[i] = msgspec.structs.replace(die, dropped=True)
        value = sum(d.value for d in dice if not (d.rerolled or d.dropped))
        rolled[id(term)] = msgspec.structs.replace(outcome, dice=tuple(dice), value=value)
