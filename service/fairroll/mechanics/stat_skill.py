"""The 2d10 Stat + Skill system, declared: simple, contested and complex checks."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

import msgspec

from fairroll.mechanics.declare import DiceGroups, Mechanic, System, Words, faces_meta, plural
from fairroll.odds import Distribution, Outcome, distribution
from fairroll.odds.stat_skill import check_odds, complex_odds, contest_odds
from fairroll.rules import stat_skill

__all__ = ["CHECK", "COMPLEX", "CONTEST", "SYSTEM"]

D10 = Annotated[int, msgspec.Meta(ge=1, le=10)]
OneD10 = Annotated[list[D10], faces_meta(10, 1)]
PeriodD10s = Annotated[list[D10], faces_meta(10, 60, description="One d10 per period, in order.")]


class CheckDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The Stat die and the Skill die, rolled elsewhere."""

    stat: OneD10
    skill: OneD10


class ContestedCheckDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Each side's Stat and Skill die, rolled elsewhere."""

    a: CheckDice
    b: CheckDice

    def groups(self) -> dict[str, list[int]]:
        return {
            "a.stat": self.a.stat,
            "a.skill": self.a.skill,
            "b.stat": self.b.stat,
            "b.skill": self.b.skill,
        }


class ComplexDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Every period's Stat and Skill dice, rolled elsewhere."""

    stat: PeriodD10s
    skill: PeriodD10s


RESULT = {
    "full_success": "Full success",
    "partial_success": "Partial success",
    "failure": "Failure",
    "critical_success": "Critical success",
    "catastrophic_failure": "Catastrophic failure",
    # "If the roll is a partial success, the threat becomes a wild card, often with very
    # unexpected results."
    "wild_card": "Wild card",
}
_SUCCEEDS = {"full_success", "partial_success", "critical_success", "wild_card"}


def _result(final: str, short: str | None) -> str:
    if final == "partial_success" and short:
        return f"{RESULT[final]} — {short.capitalize()} fell short"
    return RESULT[final]


def _words(asked: str, text: str, final: str) -> Words:
    """Words with the flags a final result sets."""
    return Words(
        asked=asked,
        text=text,
        success=final in _SUCCEEDS,
        partial=final in {"partial_success", "wild_card"},
        critical=final == "critical_success",
        catastrophic=final == "catastrophic_failure",
    )


def _ratings(check: stat_skill.Check | stat_skill.ComplexCheck) -> str:
    stat_name = getattr(check, "stat_name", None)
    skill_name = getattr(check, "skill_name", None)
    stat = f"{stat_name} {check.stat}" if stat_name else f"Stat {check.stat}"
    skill = f"{skill_name} {check.skill}" if skill_name else f"Skill {check.skill}"
    return f"{stat} + {skill} against TN {check.tn}"


def read_check(check: stat_skill.Check, outcome: stat_skill.CheckOutcome) -> Words:
    return _words(_ratings(check), _result(outcome.final, outcome.short), outcome.final)


def read_contest(contest: stat_skill.ContestedCheck, outcome: stat_skill.ContestedOutcome) -> Words:
    a, b = contest.a, contest.b
    a_name, b_name = a.name or "A", b.name or "B"
    victor = None
    if outcome.a.pairs_won != outcome.b.pairs_won:
        victor = "a" if outcome.a.pairs_won > outcome.b.pairs_won else "b"
    return Words(
        asked=f"Stat {a.stat} / Skill {a.skill} against Stat {b.stat} / Skill {b.skill}",
        text=(
            f"{a_name}: {_result(outcome.a.final, outcome.a.short)}; "
            f"{b_name}: {_result(outcome.b.final, outcome.b.short)}"
        ),
        victor=victor,
    )


def read_complex(check: stat_skill.ComplexCheck, outcome: stat_skill.ComplexOutcome) -> Words:
    asked = f"{_ratings(check)}, {plural(check.required_successes, 'success', 'successes')} needed"
    if outcome.completed and outcome.completed_in is not None:
        text = f"Done in {plural(outcome.completed_in, 'period')} ({outcome.elapsed})"
    else:
        total = outcome.periods[-1].total if outcome.periods else 0
        text = (
            f"Not done: {plural(total, 'success', 'successes')} after "
            f"{plural(len(outcome.periods), 'period')}"
        )
    return Words(asked=asked, text=text, success=outcome.completed)


def _final(name: str, title: str, odds: dict[str, Fraction]) -> Distribution:
    return distribution(name, title, odds, label=lambda k: RESULT[str(k)])


def odds_of_check(check: stat_skill.Check) -> list[Distribution]:
    odds = check_odds(check)
    result = {
        "failure": odds.failure,
        "partial_stat_short": odds.partial_stat_short,
        "partial_skill_short": odds.partial_skill_short,
        "full_success": odds.full_success,
    }
    words = {
        "failure": "Failure",
        "partial_stat_short": "Partial — Stat fell short",
        "partial_skill_short": "Partial — Skill fell short",
        "full_success": "Full success",
    }
    return [
        distribution("result", "Result", result, label=lambda k: words[str(k)]),
        _final("final", "Final result (threats activated as asked)", odds.final),
        distribution(
            "threat",
            "A threat (doubles)",
            {"threat": odds.threat, "none": 1 - odds.threat},
            label=lambda k: "Threat" if k == "threat" else "No threat",
        ),
    ]


def odds_of_contest(contest: stat_skill.ContestedCheck) -> list[Distribution]:
    odds = contest_odds(contest)
    a, b = contest.a.name or "A", contest.b.name or "B"

    def pair(k: Outcome) -> str:
        return "Standoff" if k == "standoff" else f"{a if k == 'a' else b} wins"

    return [
        distribution("stat_winner", "Stat pair", odds.stat_winner, label=pair),
        distribution("skill_winner", "Skill pair", odds.skill_winner, label=pair),
        _final("a.final", f"{a}: result", odds.a_final),
        _final("b.final", f"{b}: result", odds.b_final),
    ]


def odds_of_complex(check: stat_skill.ComplexCheck) -> list[Distribution]:
    odds = complex_odds(check)
    periods: dict[Outcome, Fraction] = dict(odds.completed_in.items())
    periods["not_done"] = odds.not_within_cap
    cap = plural(check.max_periods, "period")

    def label(k: Outcome) -> str:
        return f"Not done in {cap}" if k == "not_done" else f"Done in {plural(int(k), 'period')}"

    return [distribution("completed_in", "Periods needed", periods, label=label)]


CHECK: Mechanic[stat_skill.Check, stat_skill.CheckOutcome] = Mechanic(
    name="stat-skill.check",
    path="/checks",
    operation_id="rollStatSkillCheck",
    summary="Roll a simple check: Stat die and Skill die against the TN",
    input_type=stat_skill.Check,
    dice_type=CheckDice,
    resolve=stat_skill.resolve_check,
    read=read_check,
    odds=odds_of_check,
    odds_operation_id="statSkillCheckOdds",
    odds_summary="Exact odds of a simple check",
)

CONTEST: Mechanic[stat_skill.ContestedCheck, stat_skill.ContestedOutcome] = Mechanic(
    name="stat-skill.contest",
    path="/contests",
    operation_id="rollStatSkillContest",
    summary="Roll a contested check: Stat against Stat, Skill against Skill",
    input_type=stat_skill.ContestedCheck,
    dice_type=ContestedCheckDice,
    resolve=stat_skill.resolve_contest,
    read=read_contest,
    odds=odds_of_contest,
    odds_operation_id="statSkillContestOdds",
    odds_summary="Exact odds of a contested check",
)

COMPLEX: Mechanic[stat_skill.ComplexCheck, stat_skill.ComplexOutcome] = Mechanic(
    name="stat-skill.complex-check",
    path="/complex-checks",
    operation_id="rollStatSkillComplexCheck",
    summary="Roll a complex check period by period",
    input_type=stat_skill.ComplexCheck,
    dice_type=ComplexDice,
    resolve=stat_skill.resolve_complex_check,
    read=read_complex,
    odds=odds_of_complex,
    odds_operation_id="statSkillComplexCheckOdds",
    odds_summary="Exact distribution of the periods a complex check needs",
)

SYSTEM = System(
    slug="stat-skill",
    title="Stat + Skill (2d10)",
    description="A 2d10 Stat + Skill system with threats and fate dice.",
    source="seeds/002",
    mechanics=(CHECK, CONTEST, COMPLEX),
)
