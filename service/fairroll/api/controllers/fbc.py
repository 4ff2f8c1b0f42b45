"""Faster, Better, Cheaper: rolls, conflicts, characters, advancement and roll odds."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any

import msgspec
from litestar import Controller, post
from msgspec import UNSET, UnsetType

from fairroll.api.envelope import (
    ROLL_BODY,
    CountOdds,
    Probability,
    RollResponse,
    Seed,
    SessionRef,
    TableName,
    counts_of,
    faces_meta,
    probability_of,
)
from fairroll.api.problems import CALC_ERRORS, ROLL_ERRORS
from fairroll.api.rolls import Roller
from fairroll.mechanics import FBC_CONFLICT, FBC_ROLL
from fairroll.odds.fbc import RollOdds, conflict_odds, roll_odds
from fairroll.rules import fbc, fbc_characters
from fairroll.rules.errors import RuleError

__all__ = ["FbcController"]

D6Faces = Annotated[list[Annotated[int, msgspec.Meta(ge=1, le=6)]], faces_meta(6, fbc.MAX_RISK)]
ChanceFaces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=6)]],
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


class RollDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere: the risked dice, and chance dice for a Slower character's 6s."""

    risk: D6Faces
    chance: ChanceFaces = msgspec.field(default_factory=list)

    def groups(self) -> dict[str, list[int]]:
        return {"risk": self.risk, "chance": self.chance}


class ConflictDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere for each participant (request order), and tie-break dice."""

    participants: Annotated[list[RollDice], msgspec.Meta(min_length=2, max_length=8)]
    tiebreak: TiebreakFaces = msgspec.field(default_factory=list)

    def groups(self) -> dict[str, list[int]]:
        groups = {"tiebreak": self.tiebreak}
        for index, dice in enumerate(self.participants, 1):
            groups[f"p{index}.risk"] = dice.risk
            groups[f"p{index}.chance"] = dice.chance
        return groups


class FbcRollRequest(fbc.Roll, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One character's roll: pool, dice risked, target and the Trait's adjectives."""

    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: RollDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class FbcRollResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fbc.RollOutcome


class ConflictRequest(fbc.Conflict, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """PCs in conflict, rolling at once at target 3."""

    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: ConflictDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class ConflictResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fbc.ConflictOutcome


class RollOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Exact odds of each number of successes and of each pool size after the roll."""

    failure: Probability
    successes: list[CountOdds]
    new_pool: list[CountOdds]


def roll_odds_fields(odds: RollOdds) -> dict[str, Any]:
    """The fields of a roll's odds answer, shared by a roll and a conflict's participants."""
    return {
        "failure": probability_of(odds.successes.get(0, Fraction(0))),
        "successes": counts_of(odds.successes),
        "new_pool": counts_of(odds.new_pool),
    }


class ParticipantOdds(msgspec.Struct, frozen=True, kw_only=True):
    """One participant's own roll (target 3): successes and pool afterwards."""

    name: str
    failure: Probability
    successes: list[CountOdds]
    new_pool: list[CountOdds]


class ConflictOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Each participant's roll, exactly, in request order."""

    participants: list[ParticipantOdds]


class FbcController(Controller):
    path = "/v1/fbc"
    tags = ("fbc",)

    @post(
        "/rolls",
        operation_id="rollFbc",
        summary="Roll risked dice from a character's pool",
        description=(
            "A die succeeds when its face + Better - Worse meets the target; dice are lost "
            "from the pool by their raw face (Cheaper keeps that many, Expensive loses that "
            "many successful ones); natural 6s add dice; successes may become pool dice."
        ),
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def roll(
        self, data: Annotated[FbcRollRequest, ROLL_BODY], roller: Roller
    ) -> FbcRollResponse:
        rolled = await roller.roll(FBC_ROLL, data)
        return FbcRollResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/rolls/odds",
        operation_id="fbcRollOdds",
        summary="Exact odds of a roll's successes and new pool",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def roll_odds(self, data: fbc.Roll) -> RollOddsResponse:
        if data.risk > data.pool:
            raise RuleError(
                f"cannot risk {data.risk} dice from a pool of {data.pool}", field="risk"
            )
        return RollOddsResponse(**roll_odds_fields(roll_odds(data)))

    @post(
        "/conflicts/odds",
        operation_id="fbcConflictOdds",
        summary="Exact odds of each participant's roll in a conflict",
        description=(
            "Each participant rolls at target 3 on their own: these are the exact odds of "
            "each roll. Who narrates when follows from all of them together and is not "
            "computed."
        ),
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def conflict_odds(self, data: fbc.Conflict) -> ConflictOddsResponse:
        return ConflictOddsResponse(
            participants=[
                ParticipantOdds(name=who.name, **roll_odds_fields(odds))
                for who, odds in zip(data.participants, conflict_odds(data), strict=True)
            ]
        )

    @post(
        "/conflicts",
        operation_id="resolveFbcConflict",
        summary="Resolve a conflict between player characters",
        description=(
            "Everyone rolls at once at target 3. The Faster participant chooses to narrate "
            "first or last; among equally Fast, most successes chooses; remaining ties are "
            "broken by a die. Returns the narration order and every turn (fact or pass)."
        ),
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def conflict(
        self, data: Annotated[ConflictRequest, ROLL_BODY], roller: Roller
    ) -> ConflictResponse:
        rolled = await roller.roll(FBC_CONFLICT, data)
        return ConflictResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/characters",
        operation_id="validateFbcCharacter",
        summary="Validate a character sheet and return it normalised",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def character(self, data: fbc_characters.Character) -> fbc_characters.CharacterReport:
        return fbc_characters.validate_character(data)

    @post(
        "/advancements",
        operation_id="priceFbcAdvancement",
        summary="Buy an advance with XP: its cost and the new sheet",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def advancement(
        self, data: fbc_characters.Advancement
    ) -> fbc_characters.AdvancementOutcome:
        return fbc_characters.advance(data)
