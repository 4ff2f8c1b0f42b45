"""Dice formulas as the first reading read them (before 2026-12-03): frozen, only replayed.

This package is never edited. It is the code of :mod:`fairroll.rules.dice` as it stood
before the dialects were re-read to match each VTT's own roller (docs/rules/dice.md says
what changed), kept so that an entry an older server recorded under that reading still
replays: the dice mechanic declares it as an earlier revision
(:data:`fairroll.mechanics.dice.ROLL`), and the verifier counts what replays under it.
New rolls are never resolved here. It imports nothing of :mod:`fairroll.rules.dice`, so
no change there can move what it replays; its grammars are the ``.lark`` files beside it
(moved out of the Python source, their text unchanged), and its tree builder is
:mod:`.build`. A fix to the dice goes in :mod:`fairroll.rules.dice`, never here: an old
entry must replay as the old server rolled it, mistakes included.

A formula comes with its ``dialect``: ``roll20`` (the default), ``foundry`` (Foundry VTT)
or ``avrae`` (avrae's ``d20``). Each dialect's grammar (:mod:`.grammars`) reads it into
one model (:mod:`.model`): a tree of sums, products, functions, groups and constants
whose leaves are dice terms with their modifiers; :mod:`.rolling` rolls it as that
dialect was rolled then.

>>> formula = parse("4d6kh3 + 2 # Strength")
>>> formula.label, [t.text for t in formula.terms]
('Strength', ['4d6kh3'])
>>> from fairroll.randomness import SuppliedDice
>>> roll = resolve_formula(Formula(formula="4d6kh3+2"), SuppliedDice({"d6": [6, 1, 5, 4]}))
>>> roll.total, [d.dropped for d in roll.terms[0].dice]
(17, [False, True, False, False])
>>> foundry = Formula(formula="1d10r1", dialect="foundry")  # Foundry's r rerolls once
>>> resolve_formula(foundry, SuppliedDice({"d10": [1, 1]})).total
1
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from fairroll.randomness import MAX_SIDES, DiceSource
from fairroll.rules.dice_first.grammars import (
    DICE_PER_TERM,
    FORMULA_MAX_LENGTH,
    MAX_DICE,
    MAX_PARTS,
    MAX_ROLLED_DICE,
    MAX_TOTAL,
    parse,
)
from fairroll.rules.dice_first.model import (
    DIALECTS,
    EXPLOSION_DEPTH,
    REROLL_LIMIT,
    Condition,
    Dialect,
    DiceTerm,
    Node,
    ParsedFormula,
)
from fairroll.rules.dice_first.outcome import FormulaOutcome, GroupOutcome, RolledDie, TermOutcome
from fairroll.rules.dice_first.rolling import roll_formula

__all__ = [
    "DIALECTS",
    "DICE_PER_TERM",
    "EXPLOSION_DEPTH",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "REROLL_LIMIT",
    "STANDARD_DICE",
    "Condition",
    "Dialect",
    "DiceTerm",
    "Formula",
    "FormulaOutcome",
    "GroupOutcome",
    "Node",
    "ParsedFormula",
    "RolledDie",
    "TermOutcome",
    "parse",
    "parse_request",
    "resolve_formula",
]

#: Dice that may be supplied (physical polyhedra and Fate dice), by group.
STANDARD_DICE = ("d2", "d3", "d4", "d6", "d8", "d10", "d12", "d20", "d100", "dF")

FormulaText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=FORMULA_MAX_LENGTH,
        description=(
            "A dice formula, read in its `dialect` (Roll20 by default, Foundry VTT or "
            "avrae): `NdX`, keep/drop, rerolls, explosions, success counting, "
            "arithmetic, rounding functions, groups and a label, each as that VTT "
            "documents it (the table of every form: docs/rules/dice.md). "
            f"Limits: {DICE_PER_TERM} dice a term, {MAX_DICE} in all, explosion depth "
            f"{EXPLOSION_DEPTH} a die, {MAX_ROLLED_DICE} dice rolled at worst, sides "
            f"1..{MAX_SIDES}. See docs/rules/dice.md."
        ),
        examples=["4d6kh3", "1d20+5 # Longsword", "6d10>=8!", "8d6/2"],
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


DialectName = Annotated[
    Dialect,
    msgspec.Meta(
        description="How the formula is read: `roll20` (Roll20's Dice Reference, the "
        "default), `foundry` (Foundry VTT's dice modifiers: `r` once, `x` explodes, `>` "
        "strict, modifiers in the order written) or `avrae` (avrae's d20 grammar). "
        "The table of every form in every dialect: docs/rules/dice.md."
    ),
]


class Formula(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A dice formula to roll, and the VTT whose notation it is written in."""

    formula: FormulaText
    dialect: DialectName = "roll20"


def parse_request(request: Formula) -> ParsedFormula:
    """The request's formula, read in its dialect."""
    return parse(request.formula, request.dialect)


def resolve_formula(request: Formula, dice: DiceSource) -> FormulaOutcome:
    """Roll a formula: each term's dice as its dialect rolls them, then the arithmetic."""
    return roll_formula(parse_request(request), dice)
