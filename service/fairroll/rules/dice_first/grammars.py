"""The three dialects' notations as the first reading read them: frozen, never edited.

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
from importlib import resources
from typing import Any

import lark

from fairroll.rules.dice_first.build import Builder, check_formula
from fairroll.rules.dice_first.limits import (
    DICE_PER_TERM,
    FORMULA_MAX_LENGTH,
    HINTS,
    MAX_DICE,
    MAX_PARTS,
    MAX_ROLLED_DICE,
    MAX_TOTAL,
    error,
)
from fairroll.rules.dice_first.model import Dialect, ParsedFormula
from fairroll.rules.errors import RuleError

__all__ = [
    "DICE_PER_TERM",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "error",
    "parse",
]


def _grammar(dialect: Dialect) -> str:
    """A dialect's grammar as the first reading had it, kept beside this module as
    ``<dialect>.lark`` (shipped as package data, and copied with the client's core)."""
    return resources.files(__package__).joinpath(f"{dialect}.lark").read_text(encoding="utf-8")


#: Where a dialect accepts a label with no ``#``: the text after the formula.
_BARE_LABELS: frozenset[Dialect] = frozenset({"roll20", "avrae"})

#: What a dialect spells differently: the first character(s) refused -> how to write it.
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
    check_formula(builder, node)
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
        raise _RefusedError(at, error(at, _not_here(text, at, dialect))) from None
    except lark.exceptions.UnexpectedEOF:
        raise _RefusedError(len(text), error(len(text), _ends)) from None
    except lark.exceptions.UnexpectedToken as exc:
        token = exc.token
        if token.type == "$END":
            raise _RefusedError(len(text), error(len(text), _ends)) from None
        at = token.start_pos or 0
        message = f"{str(token)!r} cannot come here (expected {_expected(exc.expected)})"
        hint = _hint(text, at, dialect)
        raise _RefusedError(at, error(at, f"{message}; {hint}" if hint else message)) from None
    written = text.strip()
    label: str | None = None
    if isinstance(tree, lark.Tree) and tree.data == "start":
        body, label_token = tree.children
        label = str(label_token)[1:].strip() or None
        if isinstance(label_token, lark.Token) and label_token.start_pos is not None:
            written = text[: label_token.start_pos].strip()
        return body, written, label
    return tree, written, label


_ends = 'the formula ends where a number, a die or "(" should come'


def _hint(text: str, at: int, dialect: Dialect) -> str | None:
    rest = text[at:]
    for start, hint in HINTS[dialect].items():
        if rest.startswith(start) or (start in _ANY_CASE and rest[:1].lower() == start):
            return hint
    if dialect == "avrae" and rest[:1].isupper():
        return "avrae's notation is lower case"
    return None


def _not_here(text: str, at: int, dialect: Dialect) -> str:
    said = f"{text[at]!r} is not {dialect} dice notation here"
    hint = _hint(text, at, dialect)
    return f"{said}; {hint}" if hint else said
