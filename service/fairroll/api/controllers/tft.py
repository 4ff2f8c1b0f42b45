"""TFT contests: ``POST /v1/tft/contests`` and its odds."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Annotated

import msgspec
from litestar import Controller, post
from msgspec import UNSET, UnsetType

from fairroll.api.envelope import (
    ROLL_BODY,
    Probability,
    RollResponse,
    Seed,
    SessionRef,
    TableName,
    faces_meta,
    probability_of,
)
from fairroll.api.problems import CALC_ERRORS, ROLL_ERRORS
from fairroll.api.rolls import Roller
from fairroll.mechanics import TFT_CONTEST
from fairroll.odds.tft import ContestOdds, contest_odds
from fairroll.rules import tft

__all__ = ["TftController"]


D6Faces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=tft.DIE_SIDES)]],
    faces_meta(tft.DIE_SIDES, tft.MAX_DICE, min_dice=0),
]


#: A contestant gives exactly one of attribute and dice_count (said in the spec by
#: fairroll.api.openapi.declare_exactly_one).
Contestant = tft.Contestant


class TftContestDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere (physical or VTT dice) for each side, in any order."""

    a: D6Faces
    b: D6Faces

    def groups(self) -> dict[str, list[int]]:
        return {"a": self.a, "b": self.b}


class TftContestRequest(tft.Contest, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A contest between two characters."""

    a: Contestant
    b: Contestant
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: TftContestDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class TftContestResponse(RollResponse, frozen=True, kw_only=True):
    outcome: tft.ContestOutcome


class LevelOdds(msgspec.Struct, frozen=True, kw_only=True):
    level: int
    probability: Probability


class TftContestOddsRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The two sides of a contest, as in a roll (no dice are rolled)."""

    a: Contestant
    b: Contestant


class TftContestOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    a_dice: int
    b_dice: int
    a_wins: Probability
    b_wins: Probability
    no_victor: Probability
    all_dice_tied: Probability
    ran_out_of_dice: Probability
    a_victory_levels: list[LevelOdds]
    b_victory_levels: list[LevelOdds]


class TftController(Controller):
    path = "/v1/tft"
    tags = ("tft",)

    @post(
        "/contests",
        operation_id="rollTftContest",
        summary="Roll a TFT contest between two characters",
        description=(
            "Each side rolls attribute // 3 d6 plus one per helpful talent (or `dice_count`). "
            "Highest dice are compared; tied pairs are discarded from the top. "
            "With `victory_levels`, each winning die higher than every remaining "
            "losing die is one level of victory."
        ),
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def roll_contest(
        self, data: Annotated[TftContestRequest, ROLL_BODY], roller: Roller
    ) -> TftContestResponse:
        rolled = await roller.roll(TFT_CONTEST, data)
        return TftContestResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/contests/odds",
        operation_id="tftContestOdds",
        summary="Exact odds of a TFT contest",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def contest_odds(self, data: TftContestOddsRequest) -> TftContestOddsResponse:
        a_dice = tft.dice_count(data.a, "a")
        b_dice = tft.dice_count(data.b, "b")
        return _odds_response(a_dice, b_dice)


@lru_cache(maxsize=1024)
def _odds_response(a_dice: int, b_dice: int) -> TftContestOddsResponse:
    odds: ContestOdds = contest_odds(a_dice, b_dice)
    return TftContestOddsResponse(
        a_dice=a_dice,
        b_dice=b_dice,
        a_wins=probability_of(odds.a_wins),
        b_wins=probability_of(odds.b_wins),
        no_victor=probability_of(odds.all_dice_tied + odds.ran_out_of_dice),
        all_dice_tied=probability_of(odds.all_dice_tied),
        ran_out_of_dice=probability_of(odds.ran_out_of_dice),
        a_victory_levels=_levels(odds.a_levels),
        b_victory_levels=_levels(odds.b_levels),
    )


def _levels(levels: dict[int, Fraction]) -> list[LevelOdds]:
    return [LevelOdds(level=level, probability=probability_of(p)) for level, p in levels.items()]
