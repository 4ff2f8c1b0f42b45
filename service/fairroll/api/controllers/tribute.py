"""Tribute: tests (fixed difficulty or opposed) and their exact odds."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

import msgspec
from litestar import Controller, post
from msgspec import UNSET, UnsetType

from fairroll.api.envelope import (
    CountOdds,
    Probability,
    RollResponse,
    Seed,
    SessionRef,
    TableName,
    counts_of,
    faces_meta,
    not_exactly_one_of,
    probability_of,
    roll_body,
)
from fairroll.api.problems import CALC_ERRORS, ROLL_ERRORS
from fairroll.api.rolls import Roller
from fairroll.mechanics import TRIBUTE_TEST
from fairroll.odds.tribute import tribute_odds
from fairroll.rules import tribute
from fairroll.rules.errors import RuleError

__all__ = ["TributeController"]

Faces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=12)]],
    faces_meta(12, 6, description="Faces rolled elsewhere, each within the reality level's die."),
]
OptionalFaces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=12)]],
    faces_meta(12, 6, min_dice=0, description="The opponent's faces, for an opposed Test."),
]


class TestDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere: the roller's FOCUS and BURDEN dice, and the opponent's."""

    focus: Faces
    burden: Faces
    opponent_focus: OptionalFaces = msgspec.field(default_factory=list)
    opponent_burden: OptionalFaces = msgspec.field(default_factory=list)

    def groups(self) -> dict[str, list[int]]:
        return {
            "focus": self.focus,
            "burden": self.burden,
            "opponent.focus": self.opponent_focus,
            "opponent.burden": self.opponent_burden,
        }


class TestRequest(tribute.Test, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A Tribute Test. ``choice`` (revised rule) names the dice used; it needs supplied dice."""

    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: TestDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


#: Exactly one of difficulty and opponent; a named choice needs supplied dice.
TEST_BODY = roll_body(
    forbid=not_exactly_one_of("difficulty", "opponent"),
    dependent_required={"choice": ["dice"]},
)


class TestResponse(RollResponse, frozen=True, kw_only=True):
    outcome: tribute.TestOutcome


class TestOddsRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A Test against a fixed difficulty, as in a roll (nothing is rolled)."""

    reality: tribute.Reality
    rank: tribute.Rank
    focus: tribute.DiceCount = 1
    burden: tribute.DiceCount = 1
    difficulty: tribute.Difficulty
    profit_rule: tribute.ProfitRule = "revised"
    failure_counts: Annotated[
        bool,
        msgspec.Meta(description="Option 1a: Profit and Waste are counted on a Fail too."),
    ] = False


class PairOdds(msgspec.Struct, frozen=True, kw_only=True):
    profit: int
    waste: int
    probability: Probability


class TestOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Exact odds of Win, Match and Fail, and of the Profit and Waste the roller counts."""

    win: Probability
    match: Probability
    fail: Probability
    profit: list[CountOdds]
    waste: list[CountOdds]
    profit_and_waste: list[PairOdds]


class TributeController(Controller):
    path = "/v1/tribute"
    tags = ("tribute",)

    @post(
        "/tests",
        operation_id="rollTributeTest",
        summary="Roll a Tribute Test against a difficulty or an opponent",
        description=(
            "result = rank + FOCUS die - BURDEN die; higher than the opposition Wins, equal "
            "Matches, lower Fails. Under the revised rule the service chooses the dice "
            "(best outcome, then Profit - Waste) and lists every undominated alternative."
        ),
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def roll_test(
        self, data: Annotated[TestRequest, TEST_BODY], roller: Roller
    ) -> TestResponse:
        if not isinstance(data.choice, UnsetType) and isinstance(data.dice, UnsetType):
            raise RuleError(
                "name the dice to use (choice) only with dice you supplied", field="choice"
            )
        rolled = await roller.roll(TRIBUTE_TEST, data)
        return TestResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/tests/odds",
        operation_id="tributeTestOdds",
        summary="Exact odds of a Tribute Test against a fixed difficulty",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def test_odds(self, data: TestOddsRequest) -> TestOddsResponse:
        return _odds(
            tribute.REALITY_SIDES[data.reality],
            data.focus,
            data.burden,
            data.difficulty - data.rank,
            data.profit_rule,
            tribute.counts_failures(data),
        )


@lru_cache(maxsize=4096)
def _odds(
    sides: int, focus: int, burden: int, need: int, rule: str, failure_counts: bool
) -> TestOddsResponse:
    odds = tribute_odds(
        sides=sides,
        focus=focus,
        burden=burden,
        need=need,
        rule=rule,
        failure_counts=failure_counts,
    )
    return TestOddsResponse(
        win=probability_of(odds.win),
        match=probability_of(odds.match),
        fail=probability_of(odds.fail),
        profit=counts_of(odds.profit()),
        waste=counts_of(odds.waste()),
        profit_and_waste=[
            PairOdds(profit=p, waste=w, probability=probability_of(prob))
            for (p, w), prob in odds.joint.items()
        ],
    )
