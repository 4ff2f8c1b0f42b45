"""A toy rule system declared in one file, as a sixth system would be: its rules, its odds,
its declaration. ``FAIRROLL_SYSTEMS=toy_coins`` (with this folder on the path) serves it.

The rule: flip ``coins`` coins; each heads is a success; ``need`` or more is a success
of the flip, all heads a critical one.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Annotated

import msgspec

from fairroll.mechanics import DiceGroups, Mechanic, System, Words
from fairroll.mechanics.declare import faces_meta, plural
from fairroll.odds import Distribution, distribution
from fairroll.randomness import DiceSource
from fairroll.rules import RuleError


class Flip(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Flip some coins, needing some heads."""

    coins: Annotated[int, msgspec.Meta(ge=1, le=10)]
    need: Annotated[int, msgspec.Meta(ge=1, le=10)] = 1


class FlipOutcome(msgspec.Struct, frozen=True, kw_only=True):
    faces: tuple[int, ...]
    heads: int
    success: bool


def resolve_flip(flip: Flip, dice: DiceSource) -> FlipOutcome:
    """Flip ``coins`` coins (group ``coins``; 2 is heads)."""
    if flip.need > flip.coins:
        raise RuleError(f"cannot need {flip.need} heads of {flip.coins} coins", field="need")
    faces = dice.roll("coins", 2, flip.coins)
    heads = faces.count(2)
    return FlipOutcome(faces=faces, heads=heads, success=heads >= flip.need)


def flip_odds(flip: Flip) -> list[Distribution]:
    heads = {k: Fraction(comb(flip.coins, k), 2**flip.coins) for k in range(flip.coins + 1)}
    return [distribution("heads", "Heads", heads, label=lambda k: plural(k, "head"))]


def read_flip(flip: Flip, outcome: FlipOutcome) -> Words:
    return Words(
        asked=f"{plural(flip.coins, 'coin')}, needing {flip.need}",
        text=f"{plural(outcome.heads, 'head')}: {'made it' if outcome.success else 'missed'}",
        success=outcome.success,
        critical=outcome.heads == flip.coins,
    )


class Coins(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Coins flipped elsewhere: 2 is heads."""

    coins: Annotated[list[Annotated[int, msgspec.Meta(ge=1, le=2)]], faces_meta(2, 10)]


FLIP: Mechanic[Flip, FlipOutcome] = Mechanic(
    name="toy.flip",
    path="/flips",
    operation_id="rollToyFlip",
    summary="Flip coins, needing heads",
    input_type=Flip,
    dice_type=Coins,
    resolve=resolve_flip,
    read=read_flip,
    odds=flip_odds,
    odds_operation_id="toyFlipOdds",
    odds_summary="Exact odds of the heads of a flip",
)

SYSTEM = System(
    slug="toy",
    title="Toy coins",
    description="A toy system of the tests.",
    mechanics=(FLIP,),
)
