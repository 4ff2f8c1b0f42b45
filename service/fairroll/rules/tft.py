"""TFT contests between characters (Richard Smith, 2002): highest-die contests.

Each side rolls d6s: ``attribute // 3`` (or a count the GM names) plus one per
helpful talent; an attribute below 3 rolls only its talents' dice, and a side with no
dice at all has run out of dice: no victor. Both sides sort high to low and compare
pair by pair; tied pairs are discarded from the top, and the first untied pair
decides. All dice tied, or one side out of dice after the ties, is a contest without
a victor. With the
optional rule, the victor gains one level of victory per remaining die higher
than every remaining die of the loser.

>>> compare_faces((6, 4, 3, 1), (6, 1, 1))
Comparison(victor='a', discarded_ties=(6,), deciding=(4, 1), no_victor_reason=None, \
victory_level=2)
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.vocabulary import Name

__all__ = [
    "DIE_SIDES",
    "MAX_DICE",
    "Comparison",
    "Contest",
    "ContestOutcome",
    "Contestant",
    "Side",
    "compare_faces",
    "dice_count",
    "resolve_contest",
]

Side = Literal["a", "b"]
NoVictorReason = Literal["all_dice_tied", "ran_out_of_dice"]

DIE_SIDES = 6
#: Most dice one side may roll: attribute 60 // 3 (or dice_count 20) plus four talents.
MAX_DICE = 24

Attribute = Annotated[
    int,
    msgspec.Meta(
        ge=0,
        le=60,
        description="The attribute the GM names (ST, DX, IQ ...); rolls // 3 dice (an "
        "attribute below 3 rolls none but its talents' dice).",
    ),
]
Talents = Annotated[
    int,
    msgspec.Meta(ge=0, le=4, description="Helpful talents, one extra die each."),
]
DiceCount = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        le=20,
        title="Dice (instead of an attribute)",
        description="An explicit number of dice instead of an attribute's // 3.",
    ),
]


class Contestant(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One side of a contest: an attribute or an explicit dice count (exactly one), plus talents."""

    #: Fields of which exactly one is given (checked by ``dice_count``; the spec says it).
    exactly_one: ClassVar[tuple[str, str]] = ("attribute", "dice_count")

    name: Name | None = None
    attribute: Attribute | UnsetType = UNSET
    dice_count: DiceCount | UnsetType = UNSET
    talents: Talents = 0


class Contest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two contestants; ``victory_levels`` turns on the optional victory-level rule."""

    a: Contestant
    b: Contestant
    victory_levels: bool = False


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """How two sorted hands of dice compare."""

    victor: Side | None
    discarded_ties: tuple[int, ...]
    deciding: tuple[int, int] | None
    no_victor_reason: NoVictorReason | None
    victory_level: int | None


class ContestOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A resolved contest: each side's dice (high to low) and the comparison."""

    a_dice: int
    b_dice: int
    a_faces: tuple[int, ...]
    b_faces: tuple[int, ...]
    victor: Side | None
    victor_name: str | None
    discarded_ties: tuple[int, ...]
    deciding: tuple[int, int] | None
    no_victor_reason: NoVictorReason | None
    victory_level: int | None


def dice_count(contestant: Contestant, side: Side) -> int:
    """Return how many dice ``contestant`` rolls: (attribute // 3 or dice_count) + talents.

    >>> dice_count(Contestant(attribute=16, talents=2), "a")  # Roth, Master Thief
    7
    """
    if contestant.dice_count is not UNSET:
        if contestant.attribute is not UNSET:
            raise RuleError(
                f"contestant {side} gives both an attribute and a dice_count; give one of them",
                field=f"{side}.dice_count",
            )
        return contestant.dice_count + contestant.talents
    if contestant.attribute is UNSET:
        raise RuleError(
            f"contestant {side} needs an attribute (dice = attribute // 3 + talents) "
            "or a dice_count",
            field=f"{side}.attribute",
        )
    return contestant.attribute // 3 + contestant.talents


def compare_faces(a_faces: tuple[int, ...], b_faces: tuple[int, ...]) -> Comparison:
    """Compare two hands (any order) by the contest rules, victory level included."""
    a_sorted = sorted(a_faces, reverse=True)
    b_sorted = sorted(b_faces, reverse=True)
    if not a_sorted or not b_sorted:
        # A side with no dice has run out before any comparison: "if one person runs out
        # of dice ... the contest does not have a victor".
        return Comparison(
            victor=None,
            discarded_ties=(),
            deciding=None,
            no_victor_reason="ran_out_of_dice",
            victory_level=None,
        )
    ties = 0
    for a_face, b_face in zip(a_sorted, b_sorted, strict=False):
        if a_face != b_face:
            break
        ties += 1
    discarded = tuple(a_sorted[:ties])
    if ties == min(len(a_sorted), len(b_sorted)):
        reason: NoVictorReason = (
            "all_dice_tied" if len(a_sorted) == len(b_sorted) else "ran_out_of_dice"
        )
        return Comparison(
            victor=None,
            discarded_ties=discarded,
            deciding=None,
            no_victor_reason=reason,
            victory_level=None,
        )
    a_rest, b_rest = a_sorted[ties:], b_sorted[ties:]
    victor: Side = "a" if a_rest[0] > b_rest[0] else "b"
    winner, loser = (a_rest, b_rest) if victor == "a" else (b_rest, a_rest)
    return Comparison(
        victor=victor,
        discarded_ties=discarded,
        deciding=(a_rest[0], b_rest[0]),
        no_victor_reason=None,
        victory_level=sum(1 for face in winner if face > loser[0]),
    )


def resolve_contest(contest: Contest, dice: DiceSource) -> ContestOutcome:
    """Roll both sides (group ``a`` first, then ``b``) and resolve the contest."""
    a_count = dice_count(contest.a, "a")
    b_count = dice_count(contest.b, "b")
    a_faces = dice.roll("a", DIE_SIDES, a_count)
    b_faces = dice.roll("b", DIE_SIDES, b_count)
    comparison = compare_faces(a_faces, b_faces)
    names = {"a": contest.a.name, "b": contest.b.name}
    return ContestOutcome(
        a_dice=a_count,
        b_dice=b_count,
        a_faces=tuple(sorted(a_faces, reverse=True)),
        b_faces=tuple(sorted(b_faces, reverse=True)),
        victor=comparison.victor,
        victor_name=names[comparison.victor] if comparison.victor else None,
        discarded_ties=comparison.discarded_ties,
        deciding=comparison.deciding,
        no_victor_reason=comparison.no_victor_reason,
        victory_level=comparison.victory_level if contest.victory_levels else None,
    )
