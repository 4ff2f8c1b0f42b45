"""The limits every dialect's formula keeps, and how a refusal names its offset.

Each limit is checked when the formula is read, before a die is rolled: a roll is never
refused once its dice are drawn.
"""

from __future__ import annotations

from fairroll.rules.dice.model import EXPLOSION_DEPTH
from fairroll.rules.errors import RuleError

__all__ = [
    "DICE_PER_TERM",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "FormulaSyntaxError",
    "error",
    "syntax_error",
]

#: The longest formula accepted, label included.
FORMULA_MAX_LENGTH = 200
#: The most dice one term may write (``100d6``), and all the terms together.
DICE_PER_TERM = 100
MAX_DICE = 100
#: The most dice a formula may ever roll, counting every reroll and explosion it could
#: make at worst: a formula that could roll more is refused before any die is rolled.
#: As many as its most dice, each exploding to the limit (``100d10!``).
MAX_ROLLED_DICE = MAX_DICE * (1 + EXPLOSION_DEPTH)
#: No part of a formula may ever be larger than this in size (JavaScript's safe integers).
MAX_TOTAL = 2**53 - 1
#: The most parts (terms, constants, operations) a formula may have.
MAX_PARTS = 60


def error(offset: int, message: str) -> RuleError:
    """A refusal of the formula, naming the offset of the character at fault."""
    return RuleError(f"formula, at offset {offset}: {message}", field="formula")


class FormulaSyntaxError(RuleError):
    """A formula that is not well formed in its dialect (``2d6+``): a typo, not a roll
    the rules forbid. Its message says "syntax error" and names the offset."""


def syntax_error(offset: int, message: str) -> FormulaSyntaxError:
    """The refusal of a formula its dialect's grammar cannot read."""
    return FormulaSyntaxError(
        f"formula, at offset {offset}: syntax error: {message}", field="formula"
    )
