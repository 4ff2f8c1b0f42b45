"""The 2d10 Stat + Skill system: simple, contested and complex checks, and their odds."""

from __future__ import annotations

from fractions import Fraction
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
from fairroll.mechanics import STAT_SKILL_CHECK, STAT_SKILL_COMPLEX, STAT_SKILL_CONTEST
from fairroll.odds.stat_skill import check_odds, complex_odds, contest_odds
from fairroll.rules import stat_skill

__all__ = ["StatSkillController"]

D10 = Annotated[int, msgspec.Meta(ge=1, le=10)]
OneD10 = Annotated[list[D10], faces_meta(10, 1)]
PeriodD10s = Annotated[list[D10], faces_meta(10, 60, description="One d10 per period, in order.")]


class CheckDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The Stat die and the Skill die, rolled elsewhere."""

    stat: OneD10
    skill: OneD10

    def groups(self) -> dict[str, list[int]]:
        return {"stat": self.stat, "skill": self.skill}


class ContestedCheckDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    a: CheckDice
    b: CheckDice

    def groups(self) -> dict[str, list[int]]:
        return {
            "a.stat": self.a.stat,
            "a.skill": self.a.skill,
            "b.stat": self.b.stat,
            "b.skill": self.b.skill,
        }


class ComplexDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Every period's Stat and Skill dice, rolled elsewhere."""

    stat: PeriodD10s
    skill: PeriodD10s

    def groups(self) -> dict[str, list[int]]:
        return {"stat": self.stat, "skill": self.skill}


class CheckRequest(stat_skill.Check, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A simple check."""

    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CheckDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class CheckResponse(RollResponse, frozen=True, kw_only=True):
    outcome: stat_skill.CheckOutcome


class ContestedCheckRequest(
    stat_skill.ContestedCheck, frozen=True, kw_only=True, forbid_unknown_fields=True
):
    """A contested check between two characters."""

    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: ContestedCheckDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class ContestedCheckResponse(RollResponse, frozen=True, kw_only=True):
    outcome: stat_skill.ContestedOutcome


class ComplexRequest(
    stat_skill.ComplexCheck, frozen=True, kw_only=True, forbid_unknown_fields=True
):
    """A complex check: one check per period until enough successes, or the cap."""

    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: ComplexDice | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class ComplexResponse(RollResponse, frozen=True, kw_only=True):
    outcome: stat_skill.ComplexOutcome


class NamedOdds(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    probability: Probability


class CheckOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Odds of each result (which die falls short on a partial), a threat, and each final
    result once threats are activated by the request's policy and fate dice."""

    failure: Probability
    partial_stat_short: Probability
    partial_skill_short: Probability
    full_success: Probability
    threat: Probability
    final: list[NamedOdds]


def named_odds(odds: dict[str, Fraction]) -> list[NamedOdds]:
    return [NamedOdds(name=name, probability=probability_of(p)) for name, p in odds.items()]


class ContestOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Who wins each pair (``a``, ``b`` or ``standoff``) and each side's final result,
    threats activated by each side's policy and fate dice."""

    stat_winner: list[NamedOdds]
    skill_winner: list[NamedOdds]
    a_final: list[NamedOdds]
    b_final: list[NamedOdds]


class PeriodOdds(msgspec.Struct, frozen=True, kw_only=True):
    periods: int
    probability: Probability


class ComplexOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Odds of completing in exactly n periods, and of completing within the cap."""

    completed_in: list[PeriodOdds]
    within_cap: Probability
    not_within_cap: Probability


class StatSkillController(Controller):
    path = "/v1/stat-skill"
    tags = ("stat-skill",)

    @post(
        "/checks",
        operation_id="rollStatSkillCheck",
        summary="Roll a simple check: Stat die and Skill die against the TN",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def check(
        self, data: Annotated[CheckRequest, ROLL_BODY], roller: Roller
    ) -> CheckResponse:
        rolled = await roller.roll(STAT_SKILL_CHECK, data)
        return CheckResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/contests",
        operation_id="rollStatSkillContest",
        summary="Roll a contested check: Stat against Stat, Skill against Skill",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def contest(
        self, data: Annotated[ContestedCheckRequest, ROLL_BODY], roller: Roller
    ) -> ContestedCheckResponse:
        rolled = await roller.roll(STAT_SKILL_CONTEST, data)
        return ContestedCheckResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/complex-checks",
        operation_id="rollStatSkillComplexCheck",
        summary="Roll a complex check period by period",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def complex_check(
        self, data: Annotated[ComplexRequest, ROLL_BODY], roller: Roller
    ) -> ComplexResponse:
        rolled = await roller.roll(STAT_SKILL_COMPLEX, data)
        return ComplexResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/checks/odds",
        operation_id="statSkillCheckOdds",
        summary="Exact odds of a simple check",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def check_odds(self, data: stat_skill.Check) -> CheckOddsResponse:
        odds = check_odds(data)
        return CheckOddsResponse(
            failure=probability_of(odds.failure),
            partial_stat_short=probability_of(odds.partial_stat_short),
            partial_skill_short=probability_of(odds.partial_skill_short),
            full_success=probability_of(odds.full_success),
            threat=probability_of(odds.threat),
            final=named_odds(odds.final),
        )

    @post(
        "/contests/odds",
        operation_id="statSkillContestOdds",
        summary="Exact odds of a contested check",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def contest_odds(self, data: stat_skill.ContestedCheck) -> ContestOddsResponse:
        odds = contest_odds(data)
        return ContestOddsResponse(
            stat_winner=named_odds(odds.stat_winner),
            skill_winner=named_odds(odds.skill_winner),
            a_final=named_odds(odds.a_final),
            b_final=named_odds(odds.b_final),
        )

    @post(
        "/complex-checks/odds",
        operation_id="statSkillComplexCheckOdds",
        summary="Exact distribution of the periods a complex check needs",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def complex_odds(self, data: stat_skill.ComplexCheck) -> ComplexOddsResponse:
        odds = complex_odds(data)
        return ComplexOddsResponse(
            completed_in=[
                PeriodOdds(periods=n, probability=probability_of(p))
                for n, p in odds.completed_in.items()
            ],
            within_cap=probability_of(odds.within_cap),
            not_within_cap=probability_of(odds.not_within_cap),
        )
