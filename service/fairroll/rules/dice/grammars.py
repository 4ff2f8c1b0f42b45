"""The three dialects' notations, each read with its own grammar into one model.

- ``roll20``: Roll20's Dice Reference, as fairroll has always read it (compare points
  ``>N`` mean "N or more"; ``r`` rerolls until the die no longer matches).
- ``foundry``: Foundry VTT's dice modifiers (``r`` rerolls once, ``rr`` recursively,
  ``x``/``xo`` explode, ``>``/``<`` are strict, ``cs``/``cf`` count), applied in the
  order written over the whole pool, and its dice pools ``{a, b}kh``.
- ``avrae``: avrae's ``d20`` grammar (operators with selectors ``k p rr ro ra e mi ma``
  and ``X hX lX >X <X``, strict comparisons, sets ``(a, b)kh1``, ``/ // %``, and the
  comparisons ``== != >= <= > <`` worth 1 or 0), lower case only.

Each grammar is LALR (lark); a refusal names the offset of what is wrong and, where
another dialect spells the same thing, how to write it here.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from importlib import resources
from typing import Any

import lark

from fairroll.rules.dice.build import AVRAE_PERCENT, Builder
from fairroll.rules.dice.limits import (
    DICE_PER_TERM,
    FORMULA_MAX_LENGTH,
    MAX_DICE,
    MAX_PARTS,
    MAX_ROLLED_DICE,
    MAX_TOTAL,
    VTT_LIMITS,
    error,
    syntax_error,
)
from fairroll.rules.dice.model import Dialect, Node, ParsedFormula, node_bounds
from fairroll.rules.errors import RuleError

__all__ = [
    "DICE_PER_TERM",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "parse",
]


def _grammar(dialect: Dialect) -> str:
    """A dialect's grammar, kept beside this module as ``<dialect>.lark`` (shipped as
    package data, as d20 ships its own)."""
    return resources.files(__package__).joinpath(f"{dialect}.lark").read_text(encoding="utf-8")


#: Where a dialect accepts a label with no ``#``: the text after the formula.
_BARE_LABELS: frozenset[Dialect] = frozenset({"roll20"})

#: What a dialect spells differently: the first character(s) refused -> how to write it.
_HINTS: dict[Dialect, dict[str, str]] = {
    "roll20": {
        "x": "Roll20 explodes with ! (Foundry's x), or read it as Foundry: dialect foundry",
        "e": "Roll20 explodes with ! (avrae's e), or read it as avrae: dialect avrae",
        "m": "Roll20's matching (m, mt) is not taken; Foundry's min/max are dialect foundry",
        "p": "Roll20 drops with dl/dh (avrae's p), or read it as avrae: dialect avrae",
        "%": "Roll20 formulas here have no %; Foundry's is dialect foundry",
    },
    "foundry": {
        "!": "Foundry explodes with x (Roll20's !), or read it as Roll20: dialect roll20",
        "e": "Foundry explodes with x (avrae's e), or read it as avrae: dialect avrae",
        "%": "Foundry writes a d100 as d100",
        "c": "Foundry's coin (dc) is not taken",
    },
    "avrae": {
        "!": "avrae explodes with e (Roll20's !), or read it as Roll20: dialect roll20",
        "x": "avrae explodes with e (Foundry's x), or read it as Foundry: dialect foundry",
        "r": "avrae rerolls with rr (until), ro (once) or ra (and add)",
        "d": "avrae drops with p (pl1, ph1), or read it as Roll20: dialect roll20",
        "%": AVRAE_PERCENT,
        "F": "avrae has no Fate dice; read it as Roll20: dialect roll20",
        "f": "avrae has no Fate dice; read it as Roll20: dialect roll20",
        "{": "avrae groups with ( , ): (1d20, 1d20)kh1",
    },
}


#: A formula per dialect that visits most of its parser's states, parsed once when the
#: parser is built: lark compiles a state's lexer on its first visit, and a request should
#: not pay for that.
_WARM: dict[Dialect, str] = {
    "roll20": "{4d6!!>=5kh3r<2, 2d20kl1cs>19}kh1 + floor(8d6/2) * -(3d6>=5f1) # a",
    "foundry": "{4d6x>=5r<2kh2cs>=3min2, 2d20kl}kh + floor(1d6/2) % 3 - 1.5[x] # a",
    "avrae": "(4d6rr1kh3mi2, 2d20ra20pl1)kh1 + 8d6e6//2 % 3 >= 1.5 [x]",
}


#: The hints' starts that a dialect refuses in upper case as well (``2D6X``).
_ANY_CASE = frozenset({"x", "e", "p"})


@functools.cache
def _parser(dialect: Dialect) -> lark.Lark:
    parser = lark.Lark(
        _grammar(dialect), parser="lalr", propagate_positions=True, maybe_placeholders=False
    )
    parser.parse(_WARM[dialect])
    return parser


_NAMES = {
    "INT": "a number",
    "NUMBER": "a number",
    "D": '"d"',
    "SIDES": "the die's sides",
    "PLUS": '"+"',
    "MINUS": '"-"',
    "STAR": '"*"',
    "SLASH": '"/"',
    "LPAR": '"("',
    "RPAR": '")"',
    "LBRACE": '"{"',
    "RBRACE": '"}"',
    "COMMA": '","',
    "BANG": '"!"',
    "KEEP": "kh/kl/dh/dl",
    "REROLL": "r/rr",
    "EXPLODE": "x/xo",
    "OP": "a comparison",
    "COMP": "a comparison",
    "TARGET": "a number",
    "LABEL": '"#"',
    "TAG": "a [tag]",
    "ANNOTATION": "an [annotation]",
    "FUNC": "floor/ceil/round/abs",
    "SELTYPE": "h/l/</>",
    "DICEOP": "a dice operator",
    "SETOP": "k/p",
}


def _expected(names: set[str] | frozenset[str]) -> str:
    said = sorted({_NAMES.get(n, n.lower()) for n in names if n not in ("$END", "WS")})
    return ", ".join(said) or "the end"


def parse(text: str, dialect: Dialect = "roll20") -> ParsedFormula:
    """Parse a formula in ``dialect``, or raise :class:`RuleError` naming the offset of
    what is wrong (and the dialect, where it does not have what is written)."""
    return _parse(text, dialect)


@functools.lru_cache(maxsize=1024)
def _parse(text: str, dialect: Dialect) -> ParsedFormula:
    if len(text) > FORMULA_MAX_LENGTH:
        raise error(FORMULA_MAX_LENGTH, f"a formula is at most {FORMULA_MAX_LENGTH} characters")
    try:
        tree, body_text, label = _read(text, dialect)
    except _RefusedError as refused:
        label_at = _bare_label_at(text, refused.offset, dialect)
        if label_at is None:
            raise refused.error from None
        try:
            tree, body_text, _ = _read(text[:label_at], dialect)
        except _RefusedError:
            raise refused.error from None
        label = text[label_at:].strip() or None
    builder = Builder(text, dialect)
    node = builder.build(tree)
    _check(builder, node)
    return ParsedFormula(
        text=text,
        written=body_text,
        tree=node,
        terms=tuple(builder.terms),
        label=label,
        dialect=dialect,
    )


class _RefusedError(Exception):
    def __init__(self, offset: int, error: RuleError) -> None:
        self.offset = offset
        self.error = error


def _bare_label_at(text: str, offset: int, dialect: Dialect) -> int | None:
    """Roll20 and avrae read the words after a formula as its label (``1d20 Longsword``):
    where such words start, at or before the refused offset, after a space."""
    if dialect not in _BARE_LABELS:
        return None
    for match in re.finditer(r"\s+(?=[A-Za-z])", text[: offset + 1]):
        at = match.end()
        if at <= offset:
            return at
    return None


def _read(text: str, dialect: Dialect) -> tuple[Any, str, str | None]:
    try:
        tree = _parser(dialect).parse(text)
    except lark.exceptions.UnexpectedCharacters as exc:
        at = exc.pos_in_stream or 0
        raise _RefusedError(at, syntax_error(at, _not_here(text, at, dialect))) from None
    except lark.exceptions.UnexpectedEOF:
        raise _RefusedError(len(text), syntax_error(len(text), _ends)) from None
    except lark.exceptions.UnexpectedToken as exc:
        token = exc.token
        if token.type == "$END":
            raise _RefusedError(len(text), syntax_error(len(text), _ends)) from None
        at = token.start_pos or 0
        said = text[at] if token.type == "COMMENT" else str(token)  # avrae's comment
        message = f"{said!r} cannot come here (expected {_expected(exc.expected)})"
        hint = _hint(text, at, dialect)
        said = f"{message}; {hint}" if hint else message
        raise _RefusedError(at, syntax_error(at, said)) from None
    written = text.strip()
    label: str | None = None
    if isinstance(tree, lark.Tree) and tree.data == "start":
        body, label_token = tree.children
        said = str(label_token)
        if isinstance(label_token, lark.Token) and label_token.type == "LABEL":
            said = said[1:]  # the "#"; avrae's comment is all its text
        label = said.strip() or None
        if isinstance(label_token, lark.Token) and label_token.start_pos is not None:
            written = text[: label_token.start_pos].strip()
        return body, written, label
    return tree, written, label


_ends = 'the formula ends where a number, a die or "(" should come'


def _hint(text: str, at: int, dialect: Dialect) -> str | None:
    rest = text[at:]
    for start, hint in _HINTS[dialect].items():
        if rest.startswith(start) or (start in _ANY_CASE and rest[:1].lower() == start):
            return hint
    if dialect == "avrae" and rest[:1].isupper():
        return "avrae's notation is lower case"
    return None


def _not_here(text: str, at: int, dialect: Dialect) -> str:
    said = f"{text[at]!r} is not {dialect} dice notation here"
    hint = _hint(text, at, dialect)
    return f"{said}; {hint}" if hint else said


def _check(builder: Builder, node: Node) -> None:
    """The limits every formula keeps, checked before a die is rolled."""
    if builder.parts > MAX_PARTS:
        raise error(0, f"a formula has at most {MAX_PARTS} parts; this one has {builder.parts}")
    dice = sum(t.count for t in builder.terms)
    if dice > MAX_DICE:
        raise error(0, f"a formula rolls at most {MAX_DICE} dice; this one writes {dice}")
    worst = sum(t.dice_at_worst() for t in builder.terms)
    rolled = VTT_LIMITS[builder.dialect].rolled
    if rolled is not None:  # avrae: the roll stops at d20's limit, whatever its terms
        worst = min(worst, max(rolled, dice))
    if worst > MAX_ROLLED_DICE:
        raise error(
            0,
            f"this formula could roll {worst} dice with its rerolls and explosions, each "
            f"to {VTT_LIMITS[builder.dialect].roller}'s limit; fairroll rolls at most "
            f"{MAX_ROLLED_DICE} dice a formula (its limit of dice rolled at worst)",
        )
    _check_divisors(node)
    _check_powers(node)
    low, high = node_bounds(node)
    if max(abs(low), abs(high)) > MAX_TOTAL:
        far = high if abs(high) > abs(low) else low
        raise error(0, f"this formula could reach {_said(far)}, beyond ±{MAX_TOTAL}")


def _said(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def _check_powers(node: Node) -> None:
    """Roll20's ``**`` is taken with a whole exponent of at least 0 (a root or a negative
    power has no exact value to record)."""
    for part in node.parts:
        _check_powers(part)
    if node.kind == "pow":
        exponent = node.parts[1]
        low, _ = node_bounds(exponent)
        if low < 0 or not _whole(exponent):
            raise error(
                exponent.offset,
                "an exponent here is a whole number of at least 0 (no roots or negative powers)",
            )


def _whole(node: Node) -> bool:
    if node.kind == "const":
        return node.fraction is None
    if node.kind in ("div", "rem", "mod"):
        return False
    return all(_whole(p) for p in node.parts)


def _check_divisors(node: Node) -> None:
    for part in node.parts:
        _check_divisors(part)
    if node.kind in ("div", "idiv", "mod", "rem"):
        low, high = node_bounds(node.parts[1])
        if low <= 0 <= high:
            raise error(
                node.parts[1].offset,
                "this divisor can be 0; a formula may only divide by a part that cannot",
            )
