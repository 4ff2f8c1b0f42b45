"""A 2d10 Stat + Skill system: simple, contested and complex checks, threats and fate dice.

The player rolls two d10s, one declared for the Stat and one for the Skill;
each die plus its rating plus any trick bonus is compared with the TN on its
own. Both reach it: full success; one: partial success (still a success);
none: failure. Doubles are a threat: spending a fate die activates it, turning
a failure into a catastrophic failure, a full success into a critical success
and a partial success into a wild card.

>>> judge(stat_total=12, skill_total=8, tn=10)
('partial_success', 'skill')
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.vocabulary import Name

__all__ = [
    "DIE",
    "Check",
    "CheckOutcome",
    "ComplexCheck",
    "ComplexOutcome",
    "Contender",
    "ContenderOutcome",
    "ContestedCheck",
    "ContestedOutcome",
    "Period",
    "activates",
    "judge",
    "pair_winner",
    "progress",
    "resolve_check",
    "resolve_complex_check",
    "resolve_contest",
    "score_check",
    "score_contest",
]

DIE = 10

Result = Literal["failure", "partial_success", "full_success"]
Final = Literal[
    "failure",
    "partial_success",
    "full_success",
    "catastrophic_failure",
    "critical_success",
    "wild_card",
]
Short = Literal["stat", "skill"]
Policy = Literal["never", "on_success", "on_failure", "always"]
PairWinner = Literal["a", "b", "standoff"]
#: How a contested pair with equal totals is settled: ``none`` (the text: "the character
#: with the higher total succeeds", so neither does), or ``rating`` (an option: the
#: higher rating in that pair wins it; equal ratings too, and it is still a standoff).
TieBreak = Literal["none", "rating"]

Rating = Annotated[int, msgspec.Meta(ge=0, le=30, description="A Stat or Skill rating.")]
Trick = Annotated[int, msgspec.Meta(ge=-20, le=20, description="Bonus from tricks on this die.")]
TN = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        le=60,
        title="TN (target number)",
        description="Target Number: 5 routine, 10 probable, 15 possible, 20 damned unlikely, "
        "25 all but impossible.",
    ),
]
FateDice = Annotated[int, msgspec.Meta(ge=0, le=20, description="Fate dice available.")]
Label = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]

TRANSFORM: dict[str, Final] = {
    "failure": "catastrophic_failure",
    "full_success": "critical_success",
    "partial_success": "wild_card",
}


class _Ratings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A character's Stat and Skill for this check, and trick bonuses on each die."""

    stat: Rating
    skill: Rating
    stat_trick: Trick = 0
    skill_trick: Trick = 0


class Check(_Ratings, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A simple check; ``activate_threat`` says when a threat is activated (the table's call)."""

    tn: TN
    fate_dice: FateDice = 0
    activate_threat: Policy = "never"
    stat_name: Label | None = None
    skill_name: Label | None = None


class CheckOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Both dice and totals, the result, which die fell short, and what the threat did."""

    stat_die: int
    skill_die: int
    stat_total: int
    skill_total: int
    stat_succeeds: bool
    skill_succeeds: bool
    result: Result
    short: Short | None
    threat: bool
    threat_activated: bool
    threat_note: str | None
    final: Final
    fate_dice_spent: int
    fate_dice_left: int


def judge(*, stat_total: int, skill_total: int, tn: int) -> tuple[Result, Short | None]:
    """Compare each total with the TN: the result, and which side fell short on a partial."""
    stat_ok, skill_ok = stat_total >= tn, skill_total >= tn
    if stat_ok and skill_ok:
        return "full_success", None
    if stat_ok or skill_ok:
        return "partial_success", "skill" if stat_ok else "stat"
    return "failure", None


def activates(policy: Policy, result: Result) -> bool:
    """Whether a threat on this result is activated (partial successes are successes)."""
    if policy == "always":
        return True
    if policy == "on_success":
        return result != "failure"
    return policy == "on_failure" and result == "failure"


def score_check(check: Check, stat_die: int, skill_die: int, fate_dice: int) -> CheckOutcome:
    """Score a simple check from its dice, with ``fate_dice`` available."""
    stat_total = check.stat + stat_die + check.stat_trick
    skill_total = check.skill + skill_die + check.skill_trick
    result, short = judge(stat_total=stat_total, skill_total=skill_total, tn=check.tn)
    threat = stat_die == skill_die
    activated = False
    note = None
    if threat:
        if not activates(check.activate_threat, result):
            note = f"not activated (activate_threat: {check.activate_threat})"
        elif fate_dice < 1:
            note = "not activated: no fate die to spend"
        else:
            activated = True
    spent = int(activated)
    return CheckOutcome(
        stat_die=stat_die,
        skill_die=skill_die,
        stat_total=stat_total,
        skill_total=skill_total,
        stat_succeeds=stat_total >= check.tn,
        skill_succeeds=skill_total >= check.tn,
        result=result,
        short=short,
        threat=threat,
        threat_activated=activated,
        threat_note=note,
        final=TRANSFORM[result] if activated else result,
        fate_dice_spent=spent,
        fate_dice_left=fate_dice - spent,
    )


def resolve_check(check: Check, dice: DiceSource) -> CheckOutcome:
    """Roll the Stat die (group ``stat``) and the Skill die (group ``skill``)."""
    (stat_die,) = dice.roll("stat", DIE)
    (skill_die,) = dice.roll("skill", DIE)
    return score_check(check, stat_die, skill_die, check.fate_dice)


# --- contested checks ----------------------------------------------------------------------


class Contender(_Ratings, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: Name | None = None
    fate_dice: FateDice = 0
    activate_threat: Policy = "never"


class ContestedCheck(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two characters vying: Stat total against Stat total, Skill total against Skill total."""

    a: Contender
    b: Contender
    tie_break: Annotated[
        TieBreak,
        msgspec.Meta(
            description="Equal totals on a pair: none (the text: neither side succeeds on "
            "it, a standoff) or rating (the higher rating in the pair wins it)."
        ),
    ] = "none"


class ContenderOutcome(msgspec.Struct, frozen=True, kw_only=True):
    stat_die: int
    skill_die: int
    stat_total: int
    skill_total: int
    pairs_won: int
    result: Result
    short: Short | None
    threat: bool
    threat_activated: bool
    threat_note: str | None
    final: Final
    fate_dice_left: int


class ContestedOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Who won each pair (``standoff`` when totals and ratings are equal) and each side."""

    stat_winner: PairWinner
    skill_winner: PairWinner
    a: ContenderOutcome
    b: ContenderOutcome


def resolve_contest(contest: ContestedCheck, dice: DiceSource) -> ContestedOutcome:
    """Roll ``a.stat``, ``a.skill``, ``b.stat``, ``b.skill`` and compare pair by pair.

    Equal totals: a standoff that neither side wins ("the character with the higher total
    succeeds"); with ``tie_break: rating``, the higher rating wins the pair.
    """
    (a_stat,) = dice.roll("a.stat", DIE)
    (a_skill,) = dice.roll("a.skill", DIE)
    (b_stat,) = dice.roll("b.stat", DIE)
    (b_skill,) = dice.roll("b.skill", DIE)
    return score_contest(contest, a_stat, a_skill, b_stat, b_skill)


def score_contest(
    contest: ContestedCheck, a_stat: int, a_skill: int, b_stat: int, b_skill: int
) -> ContestedOutcome:
    """Score a contested check from its four dice."""
    a, b = contest.a, contest.b
    totals = {
        "a": (a.stat + a_stat + a.stat_trick, a.skill + a_skill + a.skill_trick),
        "b": (b.stat + b_stat + b.stat_trick, b.skill + b_skill + b.skill_trick),
    }
    tie_break = contest.tie_break
    stat_winner = pair_winner(totals["a"][0], totals["b"][0], a.stat, b.stat, tie_break)
    skill_winner = pair_winner(totals["a"][1], totals["b"][1], a.skill, b.skill, tie_break)
    sides = {}
    for side, who, stat_die, skill_die in (("a", a, a_stat, a_skill), ("b", b, b_stat, b_skill)):
        won_stat, won_skill = stat_winner == side, skill_winner == side
        if won_stat and won_skill:
            result: Result = "full_success"
            short: Short | None = None
        elif won_stat or won_skill:
            result, short = "partial_success", "skill" if won_stat else "stat"
        else:
            result, short = "failure", None
        threat = stat_die == skill_die
        activated = threat and activates(who.activate_threat, result) and who.fate_dice > 0
        note = None
        if threat and not activated:
            note = (
                "not activated: no fate die to spend"
                if activates(who.activate_threat, result)
                else f"not activated (activate_threat: {who.activate_threat})"
            )
        sides[side] = ContenderOutcome(
            stat_die=stat_die,
            skill_die=skill_die,
            stat_total=totals[side][0],
            skill_total=totals[side][1],
            pairs_won=int(won_stat) + int(won_skill),
            result=result,
            short=short,
            threat=threat,
            threat_activated=activated,
            threat_note=note,
            final=TRANSFORM[result] if activated else result,
            fate_dice_left=who.fate_dice - int(activated),
        )
    return ContestedOutcome(
        stat_winner=stat_winner, skill_winner=skill_winner, a=sides["a"], b=sides["b"]
    )


def pair_winner(
    a_total: int, b_total: int, a_rating: int, b_rating: int, tie_break: TieBreak = "none"
) -> PairWinner:
    """Who wins one pair of a contest (Stat against Stat, or Skill against Skill).

    >>> pair_winner(9, 9, 6, 4), pair_winner(9, 9, 6, 4, "rating")
    ('standoff', 'a')
    """
    # "The character with the higher total succeeds."
    if a_total != b_total:
        return "a" if a_total > b_total else "b"
    if tie_break == "rating" and a_rating != b_rating:
        return "a" if a_rating > b_rating else "b"
    return "standoff"


# --- complex checks ------------------------------------------------------------------------


class ComplexCheck(_Ratings, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A check repeated each period until enough successes are gathered, or the cap is hit.

    ``fate_per_critical``: fate dice spent on each critical success (at least the one
    that activates it); each one spent adds a success.
    """

    tn: TN
    required_successes: Annotated[int, msgspec.Meta(ge=1, le=30)]
    period: Label = "1 hour"
    max_periods: Annotated[
        int, msgspec.Meta(ge=1, le=60, description="The most periods the GM allows.")
    ] = 10
    fate_dice: Annotated[int, msgspec.Meta(ge=0, le=10, description="Fate dice available.")] = 0
    activate_threat: Policy = "never"
    fate_per_critical: Annotated[
        int,
        msgspec.Meta(
            ge=1,
            le=10,
            description=(
                "Fate dice to spend on each critical success, at most: fewer are spent when "
                "fewer are left (a die not held cannot be spent); each period's "
                "`successes_gained` and `fate_dice_left` say what was."
            ),
        ),
    ] = 1


class Period(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    check: CheckOutcome
    successes_gained: int
    reset: bool
    total: int


class ComplexOutcome(msgspec.Struct, frozen=True, kw_only=True):
    periods: tuple[Period, ...]
    total_successes: int
    completed: bool
    completed_in: int | None
    elapsed: str
    wild_cards: int
    fate_dice_left: int


def resolve_complex_check(check: ComplexCheck, dice: DiceSource) -> ComplexOutcome:
    """Roll a check (groups ``stat``, ``skill``) each period until done or out of periods."""
    simple = Check(
        stat=check.stat,
        skill=check.skill,
        tn=check.tn,
        stat_trick=check.stat_trick,
        skill_trick=check.skill_trick,
        activate_threat=check.activate_threat,
    )
    total, fate = 0, check.fate_dice
    periods: list[Period] = []
    while total < check.required_successes and len(periods) < check.max_periods:
        (stat_die,) = dice.roll("stat", DIE)
        (skill_die,) = dice.roll("skill", DIE)
        outcome = score_check(simple, stat_die, skill_die, fate)
        gained, reset, fate = progress(outcome, check.fate_per_critical)
        total = 0 if reset else total + gained
        periods.append(
            Period(
                number=len(periods) + 1,
                check=outcome,
                successes_gained=gained,
                reset=reset,
                total=total,
            )
        )
    completed = total >= check.required_successes
    return ComplexOutcome(
        periods=tuple(periods),
        total_successes=total,
        completed=completed,
        completed_in=len(periods) if completed else None,
        elapsed=f"{len(periods)} x {check.period}",
        wild_cards=sum(p.check.final == "wild_card" for p in periods),
        fate_dice_left=fate,
    )


def progress(outcome: CheckOutcome, fate_per_critical: int) -> tuple[int, bool, int]:
    """Successes gained, whether the total resets, and fate dice left after one period."""
    fate = outcome.fate_dice_left
    if outcome.final == "catastrophic_failure":
        # "A catastrophic failure will reset the number of successes to zero."
        return 0, True, fate
    if outcome.final == "critical_success":
        # "A critical success will add one additional success per fate die spent." The die
        # that activated the threat counts; up to fate_per_critical in all are spent.
        extra = min(fate_per_critical - 1, fate)
        return 2 + 1 + extra, False, fate - extra
    # "Partial successes count as one success towards the total, full successes count as
    # two"; a wild card is a partial success with a twist.
    gained = {"full_success": 2, "partial_success": 1, "wild_card": 1}.get(outcome.final, 0)
    return gained, False, fate
