"""The first reading's limits, its words for a refusal, and the hints it gave: frozen.

Part of :mod:`fairroll.rules.dice_first`, which is never edited, only replayed.
"""

from __future__ import annotations

from fairroll.rules.dice_first.model import EXPLOSION_DEPTH, Dialect
from fairroll.rules.errors import RuleError

__all__ = [
    "DICE_PER_TERM",
    "FORMULA_MAX_LENGTH",
    "HINTS",
    "MAX_DICE",
    "MAX_PARTS",
    "MAX_ROLLED_DICE",
    "MAX_TOTAL",
    "error",
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

HINTS: dict[Dialect, dict[str, str]] = {
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
        "%": "avrae's d% is a tens die (0 to 90); write d100, or another dialect",
        "F": "avrae has no Fate dice; read it as Roll20: dialect roll20",
        "f": "avrae has no Fate dice; read it as Roll20: dialect roll20",
        "{": "avrae groups with ( , ): (1d20, 1d20)kh1",
        "#": "avrae takes everything after the formula as its comment: leave out the #",
    },
}


def error(offset: int, message: str) -> RuleError:
    return RuleError(f"formula, at offset {offset}: {message}", field="formula")
