"""Generic dice formulas: the notation VTT users type (``4d6kh3``, ``1d20+5``, ``6d10!>=8``),
read as the VTT it comes from reads it.

A formula comes with its ``dialect``: ``roll20`` (the default, and fairroll's reading
from the start), ``foundry`` (Foundry VTT) or ``avrae`` (avrae's ``d20``). Each
dialect's grammar (:mod:`.grammars`) reads it into one model (:mod:`.model`): a tree of
sums, products, functions, groups and constants whose leaves are dice terms with their
modifiers; :mod:`.rolling` rolls it as that dialect rolls dice. ``docs/rules/dice.md``
is the reference: every form, in every dialect, with what it means and its limits.

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
from fairroll.rules.dice.grammars import (
    DICE_PER_TERM,
    FORMULA_MAX_LENGTH,
    MAX_DICE,
    MAX_PARTS,
    MAX_ROLLED_DICE,
    MAX_TOTAL,
    parse,
)
from fairroll.rules.dice.limits import MAX_HELD_DICE, VTT_LIMITS, VttLimits
from fairroll.rules.dice.model import (
    DIALECTS,
    EXPLOSION_DEPTH,
    REROLL_LIMIT,
    Condition,
    Dialect,
    DiceTerm,
    Node,
    ParsedFormula,
)
from fairroll.rules.dice.outcome import FormulaOutcome, GroupOutcome, RolledDie, TermOutcome
from fairroll.rules.dice.rolling import roll_formula

__all__ = [
    "DIALECTS",
    "DICE_PER_TERM",
    "EXPLOSION_DEPTH",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_HELD_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "REROLL_LIMIT",
    "STANDARD_DICE",
    "VTT_LIMITS",
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
    "VttLimits",
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
            "Each dialect stops rerolls and explosions where its VTT's roller does "
            f"(Roll20: {VTT_LIMITS['roll20'].depth} a die; Foundry: "
            f"{VTT_LIMITS['foundry'].checked} results a modifier checks; avrae: "
            f"{VTT_LIMITS['avrae'].rolled} dice a roll), and the words say when one did. "
            f"fairroll's own limits, refused before a die is rolled: {DICE_PER_TERM} dice a "
            f"term, {MAX_DICE} in all, {MAX_ROLLED_DICE} dice rolled at worst, sides "
            f"1..{MAX_SIDES}; and a roll that holds more than {MAX_HELD_DICE} dice (one die "
            "exploded to the deepest VTT's limit) is refused as its dice show it, so that "
            "its entry stays small: every die is recorded twice (its dice follow from its "
            "seed: the same request is refused again). See docs/rules/dice.md."
        ),
        examples=["4d6kh3", "1d20+5 # Longsword", "6d10>=8!", "8d6/2"],
        extra={  # the grammar's limits, copied into the spec as an extension
            "x-fairroll-limits": {
                # fairroll's own, refused (422) before a die is rolled
                "dice_per_term": DICE_PER_TERM,
                "total_dice": MAX_DICE,
                "rolled_dice_at_worst": MAX_ROLLED_DICE,
                # refused (422) as the dice fall: the dice one roll may hold
                "held_dice": MAX_HELD_DICE,
                "max_sides": MAX_SIDES,
                "max_magnitude": MAX_TOTAL,
                "max_length": FORMULA_MAX_LENGTH,
                "max_parts": MAX_PARTS,
                # each VTT's own, where its roller stops a die (or fails the roll)
                "explosion_depth": EXPLOSION_DEPTH,
                "reroll_limit": REROLL_LIMIT,
                "vtt": {
                    dialect: {
                        "roller": limits.roller,
                        "depth": limits.depth,
                        **({"checked": limits.checked} if limits.checked else {}),
                        **({"rolled": limits.rolled} if limits.rolled else {}),
                    }
                    for dialect, limits in VTT_LIMITS.items()
                },
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
