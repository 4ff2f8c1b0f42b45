"""Generic dice formulas: the notation VTT users type (``4d6kh3``, ``1d20+5``, ``6d10!>=8``).

A formula is parsed (with ``lark``, from the grammar below) into a small tree of
sums, products, constants and dice terms; each dice term rolls its dice in
order and applies its modifiers in a fixed order whatever order they are
written in: rerolls, then explosions, then keep/drop, then success counting.
``docs/rules/dice.md`` is the notation's reference, with every limit.

>>> formula = parse("4d6kh3 + 2 # Strength")
>>> formula.label, [t.text for t in formula.terms]
('Strength', ['4d6kh3'])
>>> from fairroll.randomness import SuppliedDice
>>> roll = resolve_formula(Formula(formula="4d6kh3+2"), SuppliedDice({"d6": [6, 1, 5, 4]}))
>>> roll.total, [d.dropped for d in roll.terms[0].dice]
(17, [False, True, False, False])

The comparisons follow Roll20's compare points, which the ``!`` and ``r``
notations come from: ``>N`` is "N or more" (the same as ``>=N``), ``<N`` "N or
less", ``=N`` or a bare ``N`` "exactly N".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import lark
import msgspec

from fairroll.randomness import MAX_SIDES, DiceSource
from fairroll.rules.errors import RuleError

__all__ = [
    "DICE_PER_TERM",
    "EXPLOSION_DEPTH",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "REROLL_LIMIT",
    "STANDARD_DICE",
    "Condition",
    "DiceTerm",
    "Formula",
    "FormulaOutcome",
    "Node",
    "ParsedFormula",
    "RolledDie",
    "TermOutcome",
    "group_of",
    "parse",
    "resolve_formula",
]

#: The longest formula accepted, label included.
FORMULA_MAX_LENGTH = 200
#: The most dice one term may write (``100d6``), and all the terms together.
DICE_PER_TERM = 100
MAX_DICE = 100
#: At most this many extra dice follow one die's explosions (the last one stands).
EXPLOSION_DEPTH = 10
#: ``r``/``rr`` reroll a die at most this many times (the last face stands).
REROLL_LIMIT = 10
#: The most dice a formula may ever roll, counting every reroll and explosion it could
#: make at worst: a formula that could roll more is refused before any die is rolled.
#: As many as its most dice, each exploding to the limit (``100d10!``).
MAX_ROLLED_DICE = MAX_DICE * (1 + EXPLOSION_DEPTH)
#: No part of a formula may ever be larger than this in size (JavaScript's safe integers).
MAX_TOTAL = 2**53 - 1
#: The most parts (terms, constants, operations) a formula may have.
MAX_PARTS = 60
#: Dice that may be supplied (physical polyhedra and Fate dice), by group.
STANDARD_DICE = ("d2", "d3", "d4", "d6", "d8", "d10", "d12", "d20", "d100", "dF")

FormulaText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=FORMULA_MAX_LENGTH,
        description=(
            "A dice formula: `NdX` (`d%` is d100, `dF` a Fate die), keep/drop `kh` `kl` "
            "`dh` `dl` (`k` is `kh`, `d` is `dl`), explode `!` or `!>N`, reroll `r<N` "
            "(`rr` the same: until it no longer matches, at most 10 times) or `ro<N` "
            "(once), success "
            "counting `>=N` `<=N`, `+ - *`, parentheses, integers, and a `# label`. "
            f"Limits: {DICE_PER_TERM} dice a term, {MAX_DICE} in all, explosion depth "
            f"{EXPLOSION_DEPTH} a die, {MAX_ROLLED_DICE} dice rolled at worst, sides "
            f"1..{MAX_SIDES}. See docs/rules/dice.md."
        ),
        examples=["4d6kh3", "1d20+5 # Longsword", "6d10>=8!"],
        extra={  # the grammar's limits, copied into the spec as an extension
            "x-fairroll-limits": {
                "dice_per_term": DICE_PER_TERM,
                "total_dice": MAX_DICE,
                "explosion_depth": EXPLOSION_DEPTH,
                "reroll_limit": REROLL_LIMIT,
                "rolled_dice_at_worst": MAX_ROLLED_DICE,
                "max_sides": MAX_SIDES,
                "max_magnitude": MAX_TOTAL,
            }
        },
    ),
]


class Formula(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A dice formula to roll, in the notation of Roll20 and Foundry VTT."""

    formula: FormulaText


class RolledDie(msgspec.Struct, frozen=True, kw_only=True):
    """One die a term rolled, in roll order: its value (-1..1 for a Fate die), and what
    became of it. A rerolled or dropped die does not count; an exploded one made the next.
    ``success`` is whether it met the term's target (null where the term counts none)."""

    value: int
    rerolled: bool = False
    exploded: bool = False
    dropped: bool = False
    success: bool | None = None


class TermOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A dice term of the formula: as written, where (``offset`` in the formula), its
    dice and its value (the sum of the dice that count, or how many succeeded)."""

    text: str
    offset: int
    sides: int
    fate: bool
    value: int
    successes: int | None
    dice: tuple[RolledDie, ...]


class FormulaOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A rolled formula: its total, each dice term as rolled, and its label."""

    total: int
    label: str | None
    terms: tuple[TermOutcome, ...]


Comparison = Literal[">=", "<=", "="]


@dataclass(frozen=True, slots=True)
class Condition:
    """A compare point: ``>= 5``, ``<= 2``, ``= 1``."""

    op: Comparison
    value: int

    def __call__(self, value: int) -> bool:
        if self.op == ">=":
            return value >= self.value
        if self.op == "<=":
            return value <= self.value
        return value == self.value

    def __str__(self) -> str:
        return f"{self.op}{self.value}"

    def words(self) -> str:
        if self.op == ">=":
            return f"{self.value} or more"
        if self.op == "<=":
            return f"{self.value} or less"
        return f"exactly {self.value}"


Keep = Literal["kh", "kl"]


@dataclass(frozen=True, slots=True)
class DiceTerm:
    """``NdX`` and its modifiers, normalised: ``dl1`` of 4 dice is ``kh3``."""

    text: str
    offset: int
    count: int
    sides: int
    fate: bool
    reroll: Condition | None = None
    reroll_once: bool = False
    explode: Condition | None = None
    keep: Keep | None = None
    keep_count: int = 0
    success: Condition | None = None

    @property
    def faces(self) -> range:
        """The values a die of this term shows."""
        return range(-1, 2) if self.fate else range(1, self.sides + 1)

    @property
    def group(self) -> str:
        return group_of(self.sides, fate=self.fate)

    def dice_at_worst(self) -> int:
        """The most dice this term can roll: each die rerolled and exploded to the limit."""
        rerolls = 0 if self.reroll is None else 1 if self.reroll_once else REROLL_LIMIT
        depth = 0 if self.explode is None else EXPLOSION_DEPTH
        return self.count * (1 + depth) * (1 + rerolls)

    def bounds(self) -> tuple[int, int]:
        """The least and the most this term can be."""
        kept = self.keep_count if self.keep else self.count
        if self.success is not None:
            return 0, kept * (1 + (EXPLOSION_DEPTH if self.explode else 0))
        if self.explode is None:
            return kept * self.faces[0], kept * self.faces[-1]
        low, high = _chain_bounds(self.faces, self.explode)
        return kept * low, kept * high


def _chain_bounds(faces: range, explode: Condition) -> tuple[int, int]:
    """The least and the most one die and its explosions can add up to: ``n`` dice that
    explode, then one that stops (any face, once the depth is reached)."""
    exploding = [v for v in faces if explode(v)]
    stopping = [v for v in faces if not explode(v)]
    lows, highs = [], []
    for n in range(EXPLOSION_DEPTH + 1):
        last = faces if n == EXPLOSION_DEPTH else stopping
        lows.append(n * min(exploding) + min(last))
        highs.append(n * max(exploding) + max(last))
    return min(lows), max(highs)


@dataclass(frozen=True, slots=True)
class Node:
    """A part of the formula: a ``term``, a ``const``, or an operation on parts."""

    kind: Literal["term", "const", "add", "sub", "mul", "neg"]
    parts: tuple[Node, ...] = ()
    term: DiceTerm | None = None
    value: int = 0

    @property
    def dice(self) -> DiceTerm:
        """The dice term of a ``term`` node."""
        if self.term is None:
            raise TypeError(f"a {self.kind} node has no dice term")
        return self.term


@dataclass(frozen=True, slots=True)
class ParsedFormula:
    """A formula as parsed: its tree, its dice terms in order, and its label (``written``
    is the formula without its label)."""

    text: str
    written: str
    tree: Node
    terms: tuple[DiceTerm, ...]
    label: str | None

    def bounds(self) -> tuple[int, int]:
        """The least and the most the formula's total can be."""
        return _bounds(self.tree)


def group_of(sides: int, *, fate: bool = False) -> str:
    """The dice group of a die: ``d6``, ``d100`` (``d%`` too), ``dF``."""
    return "dF" if fate else f"d{sides}"


def parse(text: str) -> ParsedFormula:
    """Parse a formula, or raise :class:`RuleError` naming the offset of what is wrong.

    >>> parse("2d20kh + 1d4").terms[0].keep_count
    1
    >>> parse("2d20kh +")
    Traceback (most recent call last):
    ...
    fairroll.rules.errors.RuleError: formula, at offset 8: the formula ends where a number, \
a die or "(" should come
    """
    return _parse(text)


def resolve_formula(request: Formula, dice: DiceSource) -> FormulaOutcome:
    """Roll a formula: each term's dice in order, then the arithmetic."""
    formula = parse(request.formula)
    rolled = {id(term): _roll_term(term, dice) for term in formula.terms}
    total = _evaluate(formula.tree, rolled)
    return FormulaOutcome(
        total=total, label=formula.label, terms=tuple(rolled[id(t)] for t in formula.terms)
    )


# ---------------------------------------------------------------------------------------
# Parsing

_GRAMMAR = r"""
?start: expr LABEL?
?expr: product
     | expr "+" product -> add
     | expr "-" product -> sub
?product: unary
        | product "*" unary -> mul
?unary: atom
      | "-" unary -> neg
?atom: dice TAG?
     | INT TAG? -> const
     | "(" expr ")"
dice: INT? D SIDES modifier*
SIDES: /[0-9]+|%|[fF]/
?modifier: KEEP INT? -> keep
         | "!" compare? -> explode
         | REROLL compare -> reroll
         | OP TARGET -> success
compare: OP TARGET | INT
KEEP: "kh" | "kl" | "dh" | "dl" | "k" | "d"
REROLL: "rr" | "ro" | "r"
OP: ">=" | "<=" | ">" | "<" | "="
TARGET: /-?[0-9]+/
D: "d" | "D"
LABEL: /#[^\n]*/
TAG: /\[[^\]\n]{0,40}\]/
%import common.INT
%import common.WS
%ignore WS
"""


@functools.cache
def _parser() -> lark.Lark:
    return lark.Lark(_GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


_NAMES = {
    "INT": "a number",
    "D": '"d"',
    "SIDES": "the die's sides",
    "PLUS": '"+"',
    "MINUS": '"-"',
    "STAR": '"*"',
    "LPAR": '"("',
    "RPAR": '")"',
    "BANG": '"!"',
    "KEEP": "kh/kl/dh/dl",
    "REROLL": "r/ro",
    "OP": "a comparison",
    "TARGET": "a number",
    "LABEL": '"#"',
    "TAG": "a [tag]",
}


def _expected(names: set[str] | frozenset[str]) -> str:
    said = sorted({_NAMES.get(n, n) for n in names if n not in ("$END", "WS")})
    return ", ".join(said) or "the end"


@functools.lru_cache(maxsize=1024)
def _parse(text: str) -> ParsedFormula:
    if len(text) > FORMULA_MAX_LENGTH:
        raise _error(FORMULA_MAX_LENGTH, f"a formula is at most {FORMULA_MAX_LENGTH} characters")
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedCharacters as exc:
        at = exc.pos_in_stream or 0
        raise _error(at, f"{text[at]!r} is not dice notation here") from None
    except lark.exceptions.UnexpectedEOF:
        raise _error(
            len(text), 'the formula ends where a number, a die or "(" should come'
        ) from None
    except lark.exceptions.UnexpectedToken as exc:
        token = exc.token
        if token.type == "$END":
            raise _error(
                len(text), 'the formula ends where a number, a die or "(" should come'
            ) from None
        raise _error(
            token.start_pos or 0,
            f"{str(token)!r} cannot come here (expected {_expected(exc.expected)})",
        ) from None
    label: str | None = None
    written = text.strip()
    if isinstance(tree, lark.Tree) and tree.data == "start":
        body, label_token = tree.children
        label = str(label_token)[1:].strip() or None
        if isinstance(label_token, lark.Token) and label_token.start_pos is not None:
            written = text[: label_token.start_pos].strip()
    else:
        body = tree
    builder = _Builder(text)
    node = builder.build(body)
    if builder.parts > MAX_PARTS:
        raise _error(0, f"a formula has at most {MAX_PARTS} parts; this one has {builder.parts}")
    dice = sum(t.count for t in builder.terms)
    if dice > MAX_DICE:
        raise _error(0, f"a formula rolls at most {MAX_DICE} dice; this one writes {dice}")
    worst = sum(t.dice_at_worst() for t in builder.terms)
    if worst > MAX_ROLLED_DICE:
        raise _error(
            0,
            f"this formula could roll {worst} dice with its rerolls and explosions; at most "
            f"{MAX_ROLLED_DICE} may be rolled",
        )
    low, high = _bounds(node)
    if max(abs(low), abs(high)) > MAX_TOTAL:
        raise _error(
            0,
            f"this formula could reach {high if abs(high) > abs(low) else low}, "
            f"beyond ±{MAX_TOTAL}",
        )
    return ParsedFormula(
        text=text, written=written, tree=node, terms=tuple(builder.terms), label=label
    )


def _error(offset: int, message: str) -> RuleError:
    return RuleError(f"formula, at offset {offset}: {message}", field="formula")


Parsed = lark.Tree[lark.Token] | lark.Token
_OPERATIONS: dict[str, Literal["add", "sub", "mul", "neg"]] = {
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "neg": "neg",
}


def _token(part: Parsed) -> str:
    """The text of a token (the grammar puts a token where this is called)."""
    if not isinstance(part, lark.Token):
        raise TypeError(f"expected a token, got {part!r}")
    return str(part)


def _tree(part: Parsed) -> lark.Tree[lark.Token]:
    if not isinstance(part, lark.Tree):
        raise TypeError(f"expected a tree, got {part!r}")
    return part


class _Builder:
    """Turns lark's tree into :class:`Node`s, checking each term as it goes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.terms: list[DiceTerm] = []
        self.parts = 0

    def build(self, part: Parsed) -> Node:
        self.parts += 1
        tree = _tree(part)
        kind = tree.data
        if kind == "const":
            return Node(kind="const", value=int(_token(tree.children[0])))
        if kind == "dice":
            term = self._term(tree)
            self.terms.append(term)
            return Node(kind="term", term=term)
        if kind in _OPERATIONS:
            return Node(kind=_OPERATIONS[kind], parts=tuple(self.build(c) for c in tree.children))
        # A term and its [tag]: the tag is for people.
        return self.build(tree.children[0])

    def _term(self, tree: lark.Tree[lark.Token]) -> DiceTerm:
        start = tree.meta.start_pos
        text = self.text[start : tree.meta.end_pos]
        children = list(tree.children)
        first = children[0]
        written_count = isinstance(first, lark.Token) and first.type == "INT"
        count = int(_token(children.pop(0))) if written_count else 1
        children.pop(0)  # the "d"
        written = children.pop(0)
        fate, sides = _sides(_token(written))
        if not 1 <= count <= DICE_PER_TERM:
            raise _error(start, f"a term rolls 1 to {DICE_PER_TERM} dice, not {count}")
        if not 1 <= sides <= MAX_SIDES:
            raise _error(
                _tree_start(written, start), f"a die has 1 to {MAX_SIDES} sides, not {sides}"
            )
        faces = range(-1, 2) if fate else range(1, sides + 1)
        found: dict[str, Any] = {}
        for part in children:
            modifier = _tree(part)
            at, kind = modifier.meta.start_pos, str(modifier.data)
            if kind in found:
                raise _error(at, f"{text} has two {kind} modifiers; write one")
            if kind == "keep":
                how = _token(modifier.children[0])
                n = int(_token(modifier.children[1])) if len(modifier.children) > 1 else 1
                found[kind] = _keep(how, n, count, at)
            elif kind == "success":
                op, target = modifier.children
                found[kind] = _condition(_token(op), int(_token(target)))
            else:
                found[kind] = _repeat(modifier, kind, faces, text, at)
        if "keep" in found and "explode" in found:
            raise _error(
                start,
                f"{text}: keeping or dropping exploded dice is not accepted "
                "(the pool's size would vary)",
            )
        reroll, explode = found.get("reroll"), found.get("explode")
        keep: tuple[Keep, int] | None = found.get("keep")
        return DiceTerm(
            text=text,
            offset=start,
            count=count,
            sides=sides,
            fate=fate,
            reroll=reroll[0] if reroll else None,
            reroll_once=reroll[1] if reroll else False,
            explode=explode[0] if explode else None,
            keep=keep[0] if keep else None,
            keep_count=keep[1] if keep else 0,
            success=found.get("success"),
        )


def _sides(written: str) -> tuple[bool, int]:
    """``F`` is a Fate die (drawn as a d3), ``%`` a d100."""
    if written.lower() == "f":
        return True, 3
    return False, 100 if written == "%" else int(written)


def _tree_start(part: Parsed, default: int) -> int:
    return (
        part.start_pos if isinstance(part, lark.Token) and part.start_pos is not None else default
    )


def _repeat(
    modifier: lark.Tree[lark.Token], kind: str, faces: range, text: str, at: int
) -> tuple[Condition, bool]:
    """An explosion or a reroll: on which faces, and (a reroll) whether only once."""
    compare = modifier.children[-1] if modifier.children else None
    if compare is None or isinstance(compare, lark.Token):  # "!" alone: the highest face
        condition = Condition(op="=", value=faces[-1])
    else:
        parts = compare.children
        op = _token(parts[0]) if len(parts) > 1 else "="
        condition = _condition(op, int(_token(parts[-1])))
    once = kind == "reroll" and _token(modifier.children[0]) == "ro"
    matching = sum(1 for v in faces if condition(v))
    verb = "explodes" if kind == "explode" else "rerolls"
    die = f"d{'F' if faces[0] < 0 else faces[-1]}"
    if not matching:
        raise _error(at, f"{text} {verb} on no face of a {die}")
    if matching == len(faces) and not once:
        raise _error(at, f"{text} {verb} on every face of a {die}, so it never stops")
    return condition, once


def _keep(how: str, n: int, count: int, at: int) -> tuple[Keep, int]:
    """``kh``/``kl`` n, or ``dh``/``dl`` n as the keep it is."""
    if how in ("k", "kh", "kl"):
        if not 1 <= n <= count:
            raise _error(at, f"{how}{n} keeps 1 to {count} of {count} dice")
        return ("kl" if how == "kl" else "kh"), n
    how = "dl" if how == "d" else how
    if not 1 <= n < count:
        raise _error(at, f"{how}{n} drops 1 to {count - 1} of {count} dice")
    return ("kh" if how == "dl" else "kl"), count - n


def _condition(op: str, value: int) -> Condition:
    if op in (">=", ">"):
        return Condition(op=">=", value=value)
    if op in ("<=", "<"):
        return Condition(op="<=", value=value)
    return Condition(op="=", value=value)


def _bounds(node: Node) -> tuple[int, int]:
    """The least and the most ``node`` can be (checked against :data:`MAX_TOTAL`)."""
    if node.kind == "const":
        return node.value, node.value
    if node.kind == "term":
        return node.dice.bounds()
    parts = [_bounds(p) for p in node.parts]
    if node.kind == "neg":
        return -parts[0][1], -parts[0][0]
    (a, b), (c, d) = parts
    if node.kind == "add":
        return a + c, b + d
    if node.kind == "sub":
        return a - d, b - c
    corners = (a * c, a * d, b * c, b * d)
    return min(corners), max(corners)


# ---------------------------------------------------------------------------------------
# Rolling


def _roll_term(term: DiceTerm, dice: DiceSource) -> TermOutcome:
    group, sides, offset = term.group, term.sides, -2 if term.fate else 0
    rolled: list[RolledDie] = []

    def one() -> int:
        """A die with its rerolls; the rerolled faces are kept in the record."""
        value = dice.roll(group, sides)[0] + offset
        if term.reroll is not None:
            limit = 1 if term.reroll_once else REROLL_LIMIT
            for _ in range(limit):
                if not term.reroll(value):
                    break
                rolled.append(RolledDie(value=value, rerolled=True))
                value = dice.roll(group, sides)[0] + offset
        return value

    standing: list[int] = []  # indexes (in ``rolled``) of the dice that stand
    for _ in range(term.count):
        value = one()
        depth = 0
        while term.explode is not None and term.explode(value) and depth < EXPLOSION_DEPTH:
            standing.append(len(rolled))
            rolled.append(RolledDie(value=value, exploded=True))
            value = one()
            depth += 1
        standing.append(len(rolled))
        rolled.append(RolledDie(value=value))
    kept = standing
    if term.keep is not None:
        order = sorted(
            standing, key=lambda i: (-rolled[i].value if term.keep == "kh" else rolled[i].value, i)
        )
        kept = sorted(order[: term.keep_count])
        for index in set(standing) - set(kept):
            rolled[index] = msgspec.structs.replace(rolled[index], dropped=True)
    successes: int | None = None
    if term.success is not None:
        for index in kept:
            met = term.success(rolled[index].value)
            rolled[index] = msgspec.structs.replace(rolled[index], success=met)
        successes = sum(1 for i in kept if rolled[i].success)
    value = successes if successes is not None else sum(rolled[i].value for i in kept)
    return TermOutcome(
        text=term.text,
        offset=term.offset,
        sides=sides,
        fate=term.fate,
        value=value,
        successes=successes,
        dice=tuple(rolled),
    )


def _evaluate(node: Node, rolled: dict[int, TermOutcome]) -> int:
    if node.kind == "const":
        return node.value
    if node.kind == "term":
        return rolled[id(node.term)].value
    values = [_evaluate(p, rolled) for p in node.parts]
    if node.kind == "neg":
        return -values[0]
    if node.kind == "add":
        return values[0] + values[1]
    if node.kind == "sub":
        return values[0] - values[1]
    return values[0] * values[1]
