"""Faster, Better, Cheaper, declared: rolls, conflicts, and the sheet calculations."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

import msgspec

from fairroll.mechanics.declare import (
    Calculation,
    DiceGroups,
    Mechanic,
    System,
    Words,
    faces_meta,
    plural,
)
from fairroll.odds import Distribution, distribution
from fairroll.odds.fbc import RollOdds, conflict_odds, roll_odds
from fairroll.rules import fbc, fbc_characters

__all__ = ["CONFLICT", "ROLL", "SYSTEM"]

D6 = Annotated[int, msgspec.Meta(ge=1, le=6)]
D6Faces = Annotated[list[D6], faces_meta(6, fbc.MAX_RISK)]
ChanceFaces = Annotated[
    list[D6],
    faces_meta(
        6,
        fbc.MAX_RISK,
        min_dice=0,
        description="A Slower character's chance dice, one per natural 6, in order.",
    ),
]
TiebreakFaces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=8)]],
    faces_meta(
        8,
        7,
        min_dice=0,
        description="A d(k) for each tie among k participants, in the order ties arise.",
    ),
]


class RollDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere: the risked dice, and chance dice for a Slower character's 6s."""

    risk: D6Faces
    chance: ChanceFaces = msgspec.field(default_factory=list)


class ConflictDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere for each participant (request order), and tie-break dice."""

    participants: Annotated[list[RollDice], msgspec.Meta(min_length=2, max_length=8)]
    tiebreak: TiebreakFaces = msgspec.field(default_factory=list)

    def groups(self) -> dict[str, list[int]]:
        groups = {"tiebreak": self.tiebreak}
        for index, dice in enumerate(self.participants, 1):
            groups[f"p{index}.risk"] = dice.risk
            groups[f"p{index}.chance"] = dice.chance
        return groups

    def path(self, group: str) -> str:
        """``p2.risk`` was given at ``participants[1].risk``."""
        if group.startswith("p") and "." in group:
            index, kind = group[1:].split(".", 1)
            return f"participants[{int(index) - 1}].{kind}"
        return group


def _roll_text(roll: fbc.Roll, outcome: fbc.RollOutcome) -> str:
    parts = [plural(outcome.successes, "success", "successes")]
    if outcome.converted < roll.convert:
        # The seed's limit, said rather than applied quietly: "At least one Success must be
        # used for narrating a fact", so no more than the successes but one convert.
        parts.append(
            f"{outcome.converted} converted of {roll.convert} asked "
            "(one success always stays a fact)"
        )
    elif outcome.converted:
        parts.append(f"{outcome.converted} converted")
    return f"{', '.join(parts)}; Pool {outcome.new_pool}"


def _asked(roll: fbc.Roll) -> str:
    """Every input that changed the roll: ``Pool 5, risking 3 dice, Better 1, target 4``."""
    said = [f"Pool {roll.pool}", f"risking {plural(roll.risk, 'die', 'dice')}"]
    for name in ("faster", "better", "cheaper", "slower", "worse", "expensive"):
        level = getattr(roll, name)
        if level:
            said.append(f"{name.capitalize()} {level}")
    if roll.style_as:
        said.append(f"styled as {roll.style_as}")
    if roll.convert:
        said.append(f"converting up to {roll.convert}")
    if roll.target != 3:
        said.append(f"target {roll.target}")
    return ", ".join(said)


def read_roll(roll: fbc.Roll, outcome: fbc.RollOutcome) -> Words:
    return Words(
        asked=_asked(roll),
        text=_roll_text(roll, outcome),
        success=outcome.successes > 0,
    )


def read_conflict(conflict: fbc.Conflict, outcome: fbc.ConflictOutcome) -> Words:
    return Words(
        asked=f"Conflict: {', '.join(p.name for p in conflict.participants)}",
        text=f"Narration order: {', '.join(outcome.narration_order)}",
    )


def _successes(name: str, title: str, odds: RollOdds) -> Distribution:
    return distribution(
        name,
        title,
        odds.successes,
        label=lambda n: plural(int(n), "success", "successes"),
    )


def odds_of_roll(roll: fbc.Roll) -> list[Distribution]:
    odds = roll_odds(roll)
    failure = odds.successes.get(0, Fraction(0))
    return [
        _successes("successes", "Successes", odds),
        distribution("new_pool", "Pool afterwards", odds.new_pool, label=lambda n: f"Pool {n}"),
        distribution(
            "failure",
            "A failure (no success)",
            {"failure": failure, "success": 1 - failure},
            label=lambda k: "Failure" if k == "failure" else "At least one success",
        ),
    ]


def odds_of_conflict(conflict: fbc.Conflict) -> list[Distribution]:
    every = zip(conflict.participants, conflict_odds(conflict), strict=True)
    return [
        _successes(f"participants[{i}].successes", f"{who.name}: successes", odds)
        for i, (who, odds) in enumerate(every)
    ]


ROLL: Mechanic[fbc.Roll, fbc.RollOutcome] = Mechanic(
    name="fbc.roll",
    path="/rolls",
    operation_id="rollFbc",
    summary="Roll risked dice from a character's pool",
    description=(
        "A die succeeds when its face + Better - Worse meets the target; dice are lost "
        "from the pool by their raw face (Cheaper keeps that many, Expensive loses that "
        "many successful ones); natural 6s add dice; successes may become pool dice."
    ),
    input_type=fbc.Roll,
    dice_type=RollDice,
    resolve=fbc.resolve_roll,
    read=read_roll,
    odds=odds_of_roll,
    odds_operation_id="fbcRollOdds",
    odds_summary="Exact odds of a roll's successes and new pool",
)

CONFLICT: Mechanic[fbc.Conflict, fbc.ConflictOutcome] = Mechanic(
    name="fbc.conflict",
    path="/conflicts",
    operation_id="resolveFbcConflict",
    summary="Resolve a conflict between player characters",
    description=(
        "Everyone rolls at once at target 3. The Faster participant chooses to narrate "
        "first or last; among equally Fast, most successes chooses; remaining ties are "
        "broken by a die. Returns the narration order and every turn (fact or pass)."
    ),
    input_type=fbc.Conflict,
    dice_type=ConflictDice,
    resolve=fbc.resolve_conflict,
    read=read_conflict,
    odds=odds_of_conflict,
    odds_operation_id="fbcConflictOdds",
    odds_summary="Exact odds of each participant's roll in a conflict",
    odds_description=(
        "Each participant rolls at target 3 on their own: these are the exact odds of "
        "each roll. Who narrates when follows from all of them together and is not computed."
    ),
)

SYSTEM = System(
    slug="fbc",
    title="Faster, Better, Cheaper",
    description="Faster, Better, Cheaper (Kirt A. Dankmyer, 2003).",
    source="seeds/000",
    mechanics=(ROLL, CONFLICT),
    calculations=(
        Calculation(
            path="/characters",
            operation_id="validateFbcCharacter",
            summary="Validate a character sheet and return it normalised",
            compute=fbc_characters.validate_character,
        ),
        Calculation(
            path="/advancements",
            operation_id="priceFbcAdvancement",
            summary="Buy an advance with XP: its cost and the new sheet",
            compute=fbc_characters.advance,
        ),
    ),
)
