"""A parsed dice formula, the same whatever dialect it was written in.

Each dialect's grammar (:mod:`fairroll.rules.dice.grammars`) reads its own notation
into these parts: a tree of :class:`Node` (numbers, operations, functions, groups)
whose leaves are :class:`DiceTerm`, each with its modifiers in the order its dialect
applies them. What a modifier does is the same in every dialect; which text means
which modifier, and in which order the modifiers run, is the dialect's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from fairroll.rules.dice.limits import EXPLOSION_DEPTH, REROLL_LIMIT, VTT_LIMITS

__all__ = [
    "DIALECTS",
    "EXPLOSION_DEPTH",
    "REROLL_LIMIT",
    "AnyOf",
    "Clamp",
    "Condition",
    "Count",
    "Crit",
    "Dialect",
    "DiceTerm",
    "Explode",
    "Group",
    "Match",
    "Modifier",
    "Node",
    "ParsedFormula",
    "Reroll",
    "Select",
    "Sort",
    "Test",
]


Dialect = Literal["roll20", "foundry", "avrae"]
DIALECTS: tuple[Dialect, ...] = ("roll20", "foundry", "avrae")

Comparison = Literal[">=", "<=", ">", "<", "=", "!="]


@dataclass(frozen=True, slots=True)
class Condition:
    """A compare point: ``>= 5``, ``< 2``, ``= 1``."""

    op: Comparison
    value: int

    def __call__(self, value: int | Fraction) -> bool:
        op = self.op
        if op == ">=":
            return value >= self.value
        if op == "<=":
            return value <= self.value
        if op == ">":
            return value > self.value
        if op == "<":
            return value < self.value
        if op == "!=":
            return value != self.value
        return value == self.value

    def __str__(self) -> str:
        return f"{self.op}{self.value}"

    def words(self) -> str:
        return {
            ">=": f"{self.value} or more",
            "<=": f"{self.value} or less",
            ">": f"more than {self.value}",
            "<": f"less than {self.value}",
            "!=": f"anything but {self.value}",
            "=": f"exactly {self.value}",
        }[self.op]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """Several compare points: a face matches if it meets any (``r1r3``)."""

    conditions: tuple[Condition, ...]

    def __call__(self, value: int | Fraction) -> bool:
        return any(c(value) for c in self.conditions)

    def __str__(self) -> str:
        return " or ".join(str(c) for c in self.conditions)

    def words(self) -> str:
        return " or ".join(c.words() for c in self.conditions)


Test = Condition | AnyOf


@dataclass(frozen=True, slots=True)
class Reroll:
    """Reroll a die whose face matches: ``until`` it no longer does (at most
    its VTT's limit), ``once``, or ``add`` (avrae's ``ra``: the first matching
    die of the pool rolls one more die, which is added; the die itself stays)."""

    test: Test
    mode: Literal["until", "once", "add"] = "until"
    #: avrae's ``h``/``l`` selectors: the highest or lowest ``n`` dice, not a face.
    rank: tuple[Literal["h", "l"], int] | None = None
    #: avrae's operator written again right after itself (``rr1rrh1``): one operator
    #: whose selection is the union of every selector's, as d20 joins them.
    also: tuple[Reroll, ...] = ()


@dataclass(frozen=True, slots=True)
class Explode:
    """A matching die rolls another: ``add`` (to the pool, which may explode too),
    ``once`` (Foundry's ``xo``: only the dice already rolled), ``compound`` (Roll20's
    ``!!``: added into the die itself) or ``penetrate`` (Roll20's ``!p``: each extra die
    counts one less)."""

    test: Test
    mode: Literal["add", "once", "compound", "penetrate"] = "add"


@dataclass(frozen=True, slots=True)
class Clamp:
    """Foundry's ``min``/``max``, avrae's ``mi``/``ma``: a face below (above) it counts as it."""

    low: int | None = None
    high: int | None = None


@dataclass(frozen=True, slots=True)
class Select:
    """Keep (or drop) dice: the ``n`` highest or lowest (``how`` ``h``/``l``), or every die
    whose face meets ``test`` (avrae's ``k>3``, ``p1``)."""

    keep: bool
    how: Literal["h", "l", "test"]
    n: int = 0
    test: Test | None = None
    #: avrae's ``k``/``p`` written again right after itself (``kh1kl1``): one operator
    #: that keeps (drops) the union of every selector's dice, as d20 joins them.
    also: tuple[Select, ...] = ()


@dataclass(frozen=True, slots=True)
class Count:
    """Count dice instead of adding them. ``success`` (a matching die counts 1), ``failure``
    (Roll20's ``f``: a matching die counts -1; Foundry's ``df`` the same), ``failures``
    (Foundry's ``cf``: the term counts its failures), ``subtract`` (Foundry's ``sf``: a
    matching die counts minus its face), ``even``/``odd`` (Foundry), ``margin`` (Foundry's
    ``ms``: each die counts its margin over the target)."""

    kind: Literal["success", "failure", "failures", "subtract", "even", "odd", "margin"]
    test: Test | None = None


@dataclass(frozen=True, slots=True)
class Crit:
    """Roll20's ``cs``/``cf``: which faces are marked critical; the total is unchanged."""

    success: Test | None = None
    failure: Test | None = None


@dataclass(frozen=True, slots=True)
class Match:
    """Roll20's ``m``/``mt``: dice of one face, at least ``n`` of them (and meeting
    ``test``), are a match; ``total`` (``mt``): the term is how many matches it rolled,
    not its sum (``m`` changes no total)."""

    total: bool
    n: int = 2
    test: Test | None = None


@dataclass(frozen=True, slots=True)
class Sort:
    """Roll20's ``s``/``sa``/``sd``: the dice are shown in order; the total is unchanged."""

    descending: bool = False


Modifier = Reroll | Explode | Clamp | Select | Count | Crit | Sort | Match


@dataclass(frozen=True, slots=True)
class DiceTerm:
    """``NdX`` and its modifiers, in the order its dialect applies them. ``pool``: the
    dialect rolls every die first and then runs each modifier over the pool in turn
    (Foundry, avrae); otherwise each die is rolled with its rerolls and explosions before
    the next (Roll20, fairroll's reading of today)."""

    text: str
    offset: int
    count: int
    sides: int
    fate: bool
    modifiers: tuple[Modifier, ...] = ()
    pool: bool = False
    dialect: Dialect = "roll20"
    #: Foundry's coin ``dc``: a d2 read as 0 (tails) or 1 (heads).
    coin: bool = False

    @property
    def faces(self) -> range:
        """The faces a die of this term shows."""
        if self.coin:
            return range(2)
        return range(-1, 2) if self.fate else range(1, self.sides + 1)

    @property
    def shift(self) -> int:
        """What is added to a die's face as drawn (1..sides) to give what it shows."""
        return -1 if self.coin else -2 if self.fate else 0

    @property
    def group(self) -> str:
        return "dF" if self.fate else f"d{self.sides}"

    def of(self, kind: type[Modifier]) -> list[Modifier]:
        return [m for m in self.modifiers if isinstance(m, kind)]

    # The canonical view of a Roll20 term (one of each kind), as the odds and tests read it.

    @property
    def reroll(self) -> Test | None:
        found = [m for m in self.modifiers if isinstance(m, Reroll)]
        return found[0].test if len(found) == 1 else None

    @property
    def reroll_once(self) -> bool:
        found = [m for m in self.modifiers if isinstance(m, Reroll)]
        return len(found) == 1 and found[0].mode == "once"

    @property
    def explode(self) -> Test | None:
        found = [m for m in self.modifiers if isinstance(m, Explode)]
        return found[0].test if len(found) == 1 else None

    @property
    def keep(self) -> Literal["kh", "kl"] | None:
        """``kh``/``kl`` (a drop is the keep it amounts to) with :attr:`keep_count`."""
        found = [m for m in self.modifiers if isinstance(m, Select) and m.how != "test"]
        if len(found) != 1:
            return None
        chosen = found[0]
        return "kh" if (chosen.how == "h") == chosen.keep else "kl"

    @property
    def keep_count(self) -> int:
        found = [m for m in self.modifiers if isinstance(m, Select) and m.how != "test"]
        if len(found) != 1:
            return 0
        return found[0].n if found[0].keep else self.count - found[0].n

    @property
    def success(self) -> Test | None:
        found = [m for m in self.modifiers if isinstance(m, Count) and m.kind == "success"]
        return found[0].test if len(found) == 1 else None

    @property
    def counts(self) -> bool:
        """Whether the term's value is a count of dice rather than their sum."""
        return any(
            (isinstance(m, Count) and m.kind != "margin") or (isinstance(m, Match) and m.total)
            for m in self.modifiers
        )

    @property
    def margin(self) -> tuple[bool, int] | None:
        """Foundry's ``ms``: whether the term's total counts above its target (``ms>=15``:
        the total less 15) or below it (``ms<=5``: 5 less the total), and the target. As
        Foundry keeps one margin per term, the last written stands; a target of 0 changes
        nothing."""
        found = [m for m in self.modifiers if isinstance(m, Count) and m.kind == "margin"]
        if not found or not isinstance(found[-1].test, Condition) or not found[-1].test.value:
            return None
        test = found[-1].test
        return test.op in (">", ">=", "="), test.value

    def dice_at_worst(self) -> int:
        """The most dice this term can roll: each die rerolled and exploded to its VTT's
        limit (Roll20: each die; Foundry: each modifier checks at most so many results;
        avrae: the whole roll rolls at most so many dice)."""
        limits = VTT_LIMITS[self.dialect]
        if self.pool:
            # Each modifier runs once over the pool as it then stands.
            dice = self.count
            for m in self.modifiers:
                if isinstance(m, Reroll) and m.mode == "add":
                    dice += 1
                elif isinstance(m, Reroll | Explode) and m.mode == "once":
                    dice *= 2
                elif isinstance(m, Reroll | Explode):
                    # Each result checked adds at most one die (Foundry), or the roll
                    # stops at its dice (avrae).
                    dice += limits.checked or limits.rolled or dice * limits.depth
            return dice if limits.rolled is None else min(dice, max(limits.rolled, self.count))
        rerolls = 0
        adds = 0
        for m in self.modifiers:
            if isinstance(m, Reroll):
                if m.mode == "add":
                    adds += 1
                else:
                    rerolls += 1 if m.mode == "once" else limits.depth
        depth = 0
        for m in self.modifiers:
            if isinstance(m, Explode):
                depth += 1 if m.mode == "once" else limits.depth
        return self.count * (1 + depth) * (1 + rerolls) + adds

    def bounds(self) -> tuple[int, int]:
        """The least and the most this term can be."""
        return term_bounds(self)


@dataclass(frozen=True, slots=True)
class Group:
    """A group of sub-rolls and what is done with them: keep/drop the best totals (or, a
    Roll20 group of one sub-roll, its dice), count the totals that meet a target."""

    select: Select | None = None
    count: Count | None = None
    #: Roll20's group of one sub-roll: keep/drop picks among its dice, not its total.
    of_dice: bool = False
    #: avrae's further set operators (``kh2pl1``), each over the members still kept.
    then: tuple[Select, ...] = ()
    #: Roll20's failures (``{3d6, 3d6}>10f<5``): each sub-roll that meets it takes one
    #: success away, as on dice.
    failure: Count | None = None


NodeKind = Literal[
    "term",
    "const",
    "add",
    "sub",
    "mul",
    "div",
    "idiv",
    "mod",
    "rem",
    "pow",
    "neg",
    "floor",
    "ceil",
    "round",
    "abs",
    "max",
    "min",
    "compare",
    "group",
]


@dataclass(frozen=True, slots=True)
class Node:
    """A part of the formula: a ``term``, a ``const`` (``fraction`` for a decimal), an
    operation on its parts, a rounding function, an avrae comparison (``condition``: 1 or
    0), or a ``group`` of sub-rolls (``how``)."""

    kind: NodeKind
    parts: tuple[Node, ...] = ()
    term: DiceTerm | None = None
    value: int = 0
    fraction: Fraction | None = None
    op: Comparison | None = None
    how: Group | None = None
    #: Where the part starts in the formula (a group's, for its record).
    offset: int = 0

    @property
    def dice(self) -> DiceTerm:
        """The dice term of a ``term`` node."""
        if self.term is None:
            raise TypeError(f"a {self.kind} node has no dice term")
        return self.term

    @property
    def number(self) -> Fraction:
        """The value of a ``const`` node."""
        return self.fraction if self.fraction is not None else Fraction(self.value)


@dataclass(frozen=True, slots=True)
class ParsedFormula:
    """A formula as parsed: its tree, its dice terms in order, its label (``written`` is
    the formula without its label), and the dialect it was read in."""

    text: str
    written: str
    tree: Node
    terms: tuple[DiceTerm, ...]
    label: str | None
    dialect: Dialect = "roll20"

    def bounds(self) -> tuple[Fraction, Fraction]:
        """The least and the most the formula's total can be."""
        return node_bounds(self.tree)


# ---------------------------------------------------------------------------------------
# Bounds: the least and the most every part can be, checked against the magnitude limit
# before a die is rolled (and the odds' first estimate of their size).


def node_bounds(node: Node) -> tuple[Fraction, Fraction]:
    """The least and the most ``node`` can be."""
    kind = node.kind
    if kind == "const":
        return node.number, node.number
    if kind == "term":
        low, high = term_bounds(node.dice)
        return Fraction(low), Fraction(high)
    parts = [node_bounds(p) for p in node.parts]
    if kind == "group":
        return _group_bounds(node, parts)
    if kind == "neg":
        return -parts[0][1], -parts[0][0]
    if kind in ("floor", "ceil", "round"):
        a, b = parts[0]
        if kind == "floor":
            return Fraction(math.floor(a)), Fraction(math.floor(b))
        if kind == "ceil":
            return Fraction(math.ceil(a)), Fraction(math.ceil(b))
        return Fraction(math.floor(a + Fraction(1, 2))), Fraction(math.floor(b + Fraction(1, 2)))
    if kind == "abs":
        a, b = parts[0]
        if a >= 0:
            return a, b
        if b <= 0:
            return -b, -a
        return Fraction(0), max(-a, b)
    if kind == "compare":
        return Fraction(0), Fraction(1)
    if kind in ("max", "min"):
        pick = max if kind == "max" else min
        return pick(p[0] for p in parts), pick(p[1] for p in parts)
    (a, b), (c, d) = parts
    if kind == "add":
        return a + c, b + d
    if kind == "sub":
        return a - d, b - c
    if kind == "pow":
        return _power_bounds(a, b, c, d)
    if kind in ("mod", "rem"):
        limit = max(abs(c), abs(d))
        return -limit, limit
    if kind in ("div", "idiv"):
        if c <= 0 <= d:  # refused at parse; any bounds will do until then
            return Fraction(0), Fraction(0)
        quotients = (a / c, a / d, b / c, b / d)
        least, most = min(quotients), max(quotients)
        if kind == "idiv":
            return Fraction(math.floor(least)), Fraction(math.floor(most))
        return least, most
    corners = (a * c, a * d, b * c, b * d)
    return min(corners), max(corners)


def _power_bounds(a: Fraction, b: Fraction, c: Fraction, d: Fraction) -> tuple[Fraction, Fraction]:
    """Roll20's ``**`` with a whole exponent from ``c`` to ``d`` (at least 0): the
    extremes are among the ends' powers (and 0 or 1 where the base crosses them)."""
    if max(abs(a), abs(b)) > 1 and d > 64:  # far past the magnitude limit: say so cheaply
        return -Fraction(2**64), Fraction(2**64)
    bases = {a, b} | ({Fraction(0), Fraction(1), Fraction(-1)} & _spanned(a, b))
    powers = [x ** int(e) for x in bases for e in {c, d, c + 1, d - 1} if c <= e <= d]
    return min(powers), max(powers)


def _spanned(a: Fraction, b: Fraction) -> set[Fraction]:
    return {Fraction(v) for v in (-1, 0, 1) if a <= v <= b}


def _group_bounds(node: Node, parts: list[tuple[Fraction, Fraction]]) -> tuple[Fraction, Fraction]:
    how = node.how or Group()
    if how.count is not None:
        most = Fraction(len(parts))
        failing = how.count.kind == "failure" or how.failure is not None
        return (-most, most) if failing else (Fraction(0), most)
    if how.select is None or how.of_dice:
        return sum((p[0] for p in parts), Fraction(0)), sum((p[1] for p in parts), Fraction(0))
    if how.then or how.select.also or how.select.how == "test":
        # Any subset of the members may stand.
        low = sum((min(p[0], Fraction(0)) for p in parts), Fraction(0))
        return low, sum((max(p[1], Fraction(0)) for p in parts), Fraction(0))
    n = max(0, how.select.n if how.select.keep else len(parts) - how.select.n)
    lows = sorted(p[0] for p in parts)[:n]
    highs = sorted((p[1] for p in parts), reverse=True)[:n]
    return sum(lows, Fraction(0)), sum(highs, Fraction(0))


def term_bounds(term: DiceTerm) -> tuple[int, int]:
    """The least and the most a term can be."""
    if any(isinstance(m, Match) and m.total for m in term.modifiers):
        return 0, term.dice_at_worst() // 2
    plain = not term.pool and all(
        isinstance(m, Reroll | Select | Crit | Sort | Match)
        or (isinstance(m, Explode) and m.mode == "add")
        or (isinstance(m, Count) and m.kind == "success")
        for m in term.modifiers
    )
    if plain:
        return _plain_bounds(term)
    # Any other term: what one die can count, times the fewest and the most dice that can.
    low, high = term.faces[0], term.faces[-1]
    for m in term.modifiers:
        if isinstance(m, Clamp):
            low, high = _clamped(low, m), _clamped(high, m)
    each_low, each_high = low, high
    explode = next((m for m in term.modifiers if isinstance(m, Explode)), None)
    if explode is not None and explode.mode == "penetrate":
        each_low = low - 1
    counts = [m for m in term.modifiers if isinstance(m, Count)]
    for c in counts:
        if c.kind in ("success", "failures", "even", "odd"):
            each_low, each_high = 0, 1
        elif c.kind == "failure":
            each_low = min(each_low, -1)
        elif c.kind == "subtract":
            each_low = min(each_low, -max(abs(low), abs(high)))
    if explode is not None and explode.mode == "compound":
        chain = 1 + VTT_LIMITS[term.dialect].depth
        each_low = min(each_low, each_low * chain)
        each_high = max(each_high, each_high * chain)
    most = term.dice_at_worst()
    if explode is not None and explode.mode == "compound" and not term.pool:
        most = term.count  # a compounded chain stands as one die
    fewest = 0 if any(isinstance(m, Select) for m in term.modifiers) else term.count
    total_low = each_low * (most if each_low < 0 else fewest)
    total_high = each_high * (most if each_high > 0 else fewest)
    margin = term.margin
    if margin is not None:  # Foundry's ms: the term's total less the target, or the reverse
        above, t = margin
        return (total_low - t, total_high - t) if above else (t - total_high, t - total_low)
    return total_low, total_high


def _clamped(value: int, clamp: Clamp) -> int:
    if clamp.low is not None and value < clamp.low:
        value = clamp.low
    if clamp.high is not None and value > clamp.high:
        value = clamp.high
    return value


def _plain_bounds(term: DiceTerm) -> tuple[int, int]:
    """fairroll's first reading: rerolls, explosions that add dice, keep, successes."""
    kept = min(term.count, max(0, term.keep_count)) if term.keep else term.count
    explode = term.explode
    depth = VTT_LIMITS[term.dialect].depth
    if term.success is not None:
        return 0, kept * (1 + (depth if explode else 0))
    faces = term.faces
    if explode is None:
        return kept * faces[0], kept * faces[-1]
    exploding = [v for v in faces if explode(v)]
    if not exploding:  # an explosion on no face (5d6!!>8) never explodes
        return kept * faces[0], kept * faces[-1]
    stopping = [v for v in faces if not explode(v)] or list(faces)
    lows, highs = [], []
    for n in range(depth + 1):
        last = list(faces) if n == depth else stopping
        lows.append(n * min(exploding) + min(last))
        highs.append(n * max(exploding) + max(last))
    return kept * min(lows), kept * max(highs)
