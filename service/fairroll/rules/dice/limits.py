"""The limits a formula keeps: each VTT's own, where it stops a die, and fairroll's, which
bound the service and refuse a formula before a die is rolled.

Where a VTT stops rerolling or exploding a die, its dialect stops there too. Where a VTT
fails the roll instead (Foundry VTT once a modifier has checked too many results, avrae's
d20 once a roll has rolled too many dice), a fairroll roll cannot fail, as its dice are
already drawn: it stops where the VTT fails, and its words say so. fairroll's own limits
(the dice written, the dice a formula could roll at worst, its length, its parts, its
magnitude) are checked when the formula is read, before a die is rolled. One more is
checked as the dice fall: a roll that would hold more than :data:`MAX_HELD_DICE` dice is
refused, as its entry would be too large; its dice follow from its seed (or its supplied
faces), so the same request is refused again, and nothing is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from fairroll.rules.errors import RuleError

__all__ = [
    "DICE_PER_TERM",
    "EXPLOSION_DEPTH",
    "FORMULA_MAX_LENGTH",
    "MAX_DICE",
    "MAX_HELD_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "REROLL_LIMIT",
    "VTT_LIMITS",
    "FormulaSyntaxError",
    "VttLimits",
    "error",
    "syntax_error",
]


@dataclass(frozen=True, slots=True)
class VttLimits:
    """Where a dialect's own roller stops a die or fails a roll.

    ``depth``: the most explosions (or rerolls) one die makes, alone; after the last,
    the die rolled stands whatever it shows. ``checked``: Foundry's modifier throws once
    it has checked more results than this; fairroll checks no more, and the results left
    stand. ``rolled``: d20 fails a roll that rolls more dice than this; fairroll rolls
    no more, and the die that would have rerolled or exploded stands.
    """

    roller: str
    depth: int
    checked: int | None = None
    rolled: int | None = None


#: Each dialect's VTT's limits, as its own roller's code has them (docs/rules/dice.md):
#: rpg-dice-roller stops a die after 1,000 explosions or rerolls (Roll20's Dice Reference
#: states none); Foundry VTT's ``Die`` modifiers throw past 1,000 results checked; d20's
#: ``RollContext`` fails a roll past 1,000 dice.
VTT_LIMITS: dict[str, VttLimits] = {
    "roll20": VttLimits(roller="rpg-dice-roller", depth=1000),
    "foundry": VttLimits(roller="Foundry VTT", depth=1000, checked=1000),
    # A die alone reaches 1,000 dice in a roll: itself and 999 more.
    "avrae": VttLimits(roller="d20", depth=999, rolled=1000),
}

#: The most explosions, and rerolls, any dialect lets one die make (the odds' and the
#: bounds' worst case).
EXPLOSION_DEPTH = max(v.depth for v in VTT_LIMITS.values())
REROLL_LIMIT = EXPLOSION_DEPTH

#: The longest formula accepted, label included.
FORMULA_MAX_LENGTH = 200
#: The most dice one term may write (``100d6``), and all the terms together.
DICE_PER_TERM = 100
MAX_DICE = 100
#: fairroll's own: the most dice a formula may ever roll, counting every reroll and
#: explosion it could make at worst, so that a roll's work and its entry stay bounded: a
#: formula that could roll more is refused before any die is rolled. As many as its most
#: dice, each exploding to Roll20's limit (``100d10!``).
MAX_ROLLED_DICE = MAX_DICE * (1 + EXPLOSION_DEPTH)
#: fairroll's own: the most dice one roll may hold (every die it rolled, rerolled and
#: exploded, each recorded twice in its entry: in ``dice`` and in the outcome, some 120 to
#: 165 bytes of entry a die). One die exploded to the deepest VTT's limit (rpg-dice-roller's
#: 1,000 explosions: the die and 1,000 more), and as many as avrae's d20 rolls in a roll
#: or a Foundry modifier checks: an entry and an answer stay within some 170 KB. A roll
#: that holds more is refused (422) once its dice show it, and nothing is recorded: its
#: dice follow from its seed (or its supplied faces), so the same request refuses again.
MAX_HELD_DICE = 1 + EXPLOSION_DEPTH
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
