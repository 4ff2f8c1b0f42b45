"""The 2d10 Stat + Skill system (seed 002): checks, contests, complex checks, odds."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from typing import Any

import icepool
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.odds.stat_skill import check_odds, complex_odds, contest_odds
from fairroll.randomness import DiceError, SeededDice, SuppliedDice
from fairroll.rules.stat_skill import (
    Check,
    ComplexCheck,
    Contender,
    ContestedCheck,
    resolve_check,
    resolve_complex_check,
    resolve_contest,
)


def check(stat_die: int, skill_die: int, **fields: Any) -> Any:
    fields = {"stat": 5, "skill": 5, "tn": 10, **fields}
    return resolve_check(Check(**fields), SuppliedDice({"stat": [stat_die], "skill": [skill_die]}))


def test_sharpshooter_hits_with_agility_and_firearms() -> None:
    # "to see if a sharpshooter hits a target, use Agility and Firearms"
    outcome = check(6, 7, stat_name="Agility", skill_name="Firearms", stat=4, skill=5, tn=10)
    assert (outcome.stat_total, outcome.skill_total) == (10, 12)
    assert outcome.result == "full_success"


def test_each_total_is_die_plus_rating_plus_tricks_against_the_tn_separately() -> None:
    # "Each die is added to the relevant Stat or Skill, then any bonuses from tricks are
    #  applied. Each total is compared to the TN separately."
    outcome = check(3, 3, stat=4, skill=5, stat_trick=3, skill_trick=1, tn=10)
    assert (outcome.stat_total, outcome.skill_total) == (10, 9)
    assert (outcome.stat_succeeds, outcome.skill_succeeds) == (True, False)


@pytest.mark.parametrize(
    ("stat_die", "skill_die", "result", "short"),
    [
        (5, 5, "full_success", None),  # both equal to the TN: "equal to or above"
        (4, 4, "failure", None),
        (4, 7, "partial_success", "stat"),
        (8, 2, "partial_success", "skill"),
    ],
)
def test_results(stat_die: int, skill_die: int, result: str, short: str | None) -> None:
    outcome = check(stat_die, skill_die)
    assert (outcome.result, outcome.short) == (result, short)


def test_chasm_jump_partials_say_which_roll_fell_short() -> None:
    # "the first result may have been because the Muscle roll was not up to par. The second
    #  may have been because the Athletics roll was too low."
    clinging = check(2, 9, stat_name="Muscle", skill_name="Athletics", stat=4, skill=4, tn=12)
    twisted = check(9, 2, stat_name="Muscle", skill_name="Athletics", stat=4, skill=4, tn=12)
    assert (clinging.result, clinging.short) == ("partial_success", "stat")
    assert (twisted.result, twisted.short) == ("partial_success", "skill")


@pytest.mark.parametrize(
    ("die", "tn", "final"),
    [
        (2, 15, "catastrophic_failure"),  # "a gun jams"
        (7, 10, "critical_success"),  # "not only is the car repaired, it is improved"
    ],
)
def test_activated_threat_transforms_the_result(die: int, tn: int, final: str) -> None:
    outcome = check(die, die, tn=tn, fate_dice=2, activate_threat="always")
    assert outcome.threat and outcome.threat_activated
    assert outcome.final == final
    assert (outcome.fate_dice_spent, outcome.fate_dice_left) == (1, 1)


def test_partial_threat_becomes_a_wild_card() -> None:
    # Doubles can only be partial when the ratings or tricks differ.
    outcome = check(5, 5, stat=6, skill=3, tn=10, fate_dice=1, activate_threat="on_success")
    assert (outcome.result, outcome.final) == ("partial_success", "wild_card")


def test_no_fate_die_no_activation() -> None:
    outcome = check(7, 7, fate_dice=0, activate_threat="always")
    assert outcome.threat and not outcome.threat_activated
    assert outcome.final == "full_success"
    assert outcome.threat_note == "not activated: no fate die to spend"


@pytest.mark.parametrize(
    ("policy", "die", "activated"),
    [
        ("never", 7, False),
        ("on_success", 7, True),
        ("on_success", 2, False),
        ("on_failure", 2, True),
        ("on_failure", 7, False),
        ("always", 2, True),
    ],
)
def test_threat_policy(policy: str, die: int, activated: bool) -> None:
    outcome = check(die, die, fate_dice=1, activate_threat=policy)
    assert outcome.threat_activated is activated


def test_declared_dice_are_stat_then_skill() -> None:
    # "declaring before the roll which is Stat and which is Skill"
    dice = SeededDice("declared")
    outcome = resolve_check(Check(stat=1, skill=1, tn=5), dice)
    assert [d.group for d in dice.dice] == ["stat", "skill"]
    assert (outcome.stat_die, outcome.skill_die) == tuple(d.face for d in dice.dice)


# --- contested checks -------------------------------------------------------------------


def contest(a: dict[str, Any], b: dict[str, Any], dice: dict[str, list[int]]) -> Any:
    return resolve_contest(ContestedCheck(a=Contender(**a), b=Contender(**b)), SuppliedDice(dice))


def test_contest_compares_stat_with_stat_and_skill_with_skill() -> None:
    # "partial successes are quite common in contested checks, in which both contestants
    #  make some form of headway"
    outcome = contest(
        {"stat": 5, "skill": 3},
        {"stat": 3, "skill": 5},
        {"a.stat": [6], "a.skill": [4], "b.stat": [6], "b.skill": [4]},
    )
    assert (outcome.stat_winner, outcome.skill_winner) == ("a", "b")
    assert (outcome.a.result, outcome.a.short) == ("partial_success", "skill")
    assert (outcome.b.result, outcome.b.short) == ("partial_success", "stat")


def test_contest_full_success_and_failure() -> None:
    outcome = contest(
        {"stat": 5, "skill": 5},
        {"stat": 2, "skill": 2},
        {"a.stat": [5], "a.skill": [6], "b.stat": [4], "b.skill": [4]},
    )
    assert (outcome.a.result, outcome.b.result) == ("full_success", "failure")


def test_equal_totals_are_a_standoff_neither_side_wins() -> None:
    # "The character with the higher total succeeds." Equal totals: neither does.
    outcome = contest(
        {"stat": 6, "skill": 4},
        {"stat": 4, "skill": 4},
        {"a.stat": [3], "a.skill": [5], "b.stat": [5], "b.skill": [5]},
    )
    assert (outcome.stat_winner, outcome.skill_winner) == ("standoff", "standoff")
    assert (outcome.a.result, outcome.b.result) == ("failure", "failure")


def test_the_rating_tie_break_is_an_explicit_option() -> None:
    dice = SuppliedDice({"a.stat": [3], "a.skill": [5], "b.stat": [5], "b.skill": [5]})
    check = ContestedCheck(
        a=Contender(stat=6, skill=4), b=Contender(stat=4, skill=4), tie_break="rating"
    )
    outcome = resolve_contest(check, dice)
    assert outcome.stat_winner == "a"  # 9 = 9, Stat 6 beats Stat 4
    assert outcome.skill_winner == "standoff"  # 9 = 9 and 4 = 4: neither wins the pair
    assert (outcome.a.result, outcome.b.result) == ("partial_success", "failure")


def test_threats_on_either_side_of_a_contest() -> None:
    outcome = contest(
        {"stat": 5, "skill": 5, "fate_dice": 1, "activate_threat": "always"},
        {"stat": 5, "skill": 5},
        {"a.stat": [8], "a.skill": [8], "b.stat": [3], "b.skill": [3]},
    )
    assert (outcome.a.final, outcome.a.fate_dice_left) == ("critical_success", 0)
    assert outcome.b.threat and not outcome.b.threat_activated
    assert outcome.b.final == "failure"


# --- complex checks ---------------------------------------------------------------------


def complex_(dice: list[tuple[int, int]], **fields: Any) -> Any:
    fields = {"stat": 5, "skill": 5, "tn": 10, "required_successes": 5, **fields}
    supplied = SuppliedDice({"stat": [s for s, _ in dice], "skill": [k for _, k in dice]})
    outcome = resolve_complex_check(ComplexCheck(**fields), supplied)
    supplied.check_all_used()
    return outcome


def test_partial_counts_one_and_full_counts_two() -> None:
    # "Partial successes count as one success towards the total, full successes count as two"
    outcome = complex_([(6, 2), (6, 7), (9, 5)], period="1 hour")
    assert [p.successes_gained for p in outcome.periods] == [1, 2, 2]
    assert (outcome.completed, outcome.completed_in, outcome.elapsed) == (True, 3, "3 x 1 hour")


def test_catastrophic_failure_resets_to_zero() -> None:
    # "A catastrophic failure will reset the number of successes to zero."
    outcome = complex_(
        [(6, 7), (2, 2), (6, 7), (6, 7), (8, 9)], fate_dice=1, activate_threat="always"
    )
    assert [p.total for p in outcome.periods] == [2, 0, 2, 4, 6]
    assert outcome.periods[1].reset
    assert outcome.fate_dice_left == 0


def test_critical_success_adds_one_per_fate_die_spent() -> None:
    # "A critical success will add one additional success per fate die spent."
    outcome = complex_(
        [(7, 7)],
        required_successes=5,
        fate_dice=4,
        activate_threat="on_success",
        fate_per_critical=3,
    )
    assert outcome.periods[0].check.final == "critical_success"
    assert outcome.periods[0].successes_gained == 2 + 3
    assert outcome.fate_dice_left == 1


def test_wild_cards_are_reported_and_count_one() -> None:
    outcome = complex_(
        [(5, 5), (9, 9)],
        stat=6,
        skill=3,
        required_successes=3,
        fate_dice=1,
        activate_threat="on_success",
    )
    assert outcome.wild_cards == 1
    assert outcome.periods[0].successes_gained == 1


def test_the_cap_ends_an_unfinished_complex_check() -> None:
    outcome = complex_([(1, 2), (1, 2)], max_periods=2)
    assert (outcome.completed, outcome.completed_in, outcome.total_successes) == (False, None, 0)


def test_unneeded_supplied_dice_are_refused() -> None:
    with pytest.raises(DiceError):
        complex_([(9, 9), (9, 9), (9, 9), (1, 1)], required_successes=2)


@given(
    st.integers(0, 10),
    st.integers(0, 10),
    st.integers(1, 30),
    st.integers(0, 3),
    st.sampled_from(["never", "on_success", "on_failure", "always"]),
    st.text(min_size=1),
)
def test_complex_check_invariants(
    stat: int, skill: int, tn: int, fate: int, policy: str, seed: str
) -> None:
    spec = ComplexCheck(
        stat=stat,
        skill=skill,
        tn=tn,
        required_successes=6,
        max_periods=12,
        fate_dice=fate,
        activate_threat=policy,  # type: ignore[arg-type]
    )
    outcome = resolve_complex_check(spec, SeededDice(seed))
    assert outcome.fate_dice_left >= 0
    assert all(p.total >= 0 for p in outcome.periods)
    assert outcome.completed == (outcome.total_successes >= 6)
    assert len(outcome.periods) <= 12
    for period in outcome.periods:
        threat = period.check.stat_die == period.check.skill_die
        assert period.check.threat is threat
        both = period.check.stat_succeeds and period.check.skill_succeeds
        assert (period.check.result == "full_success") is both
    assert resolve_complex_check(spec, SeededDice(seed)) == outcome


# --- odds -------------------------------------------------------------------------------


@pytest.mark.parametrize(("stat", "skill", "tn"), [(5, 5, 10), (2, 8, 12), (0, 0, 11), (9, 1, 6)])
def test_check_odds_match_icepool(stat: int, skill: int, tn: int) -> None:
    odds = check_odds(Check(stat=stat, skill=skill, tn=tn))
    stat_ok = (icepool.d10 + stat >= tn).probability(True)
    skill_ok = (icepool.d10 + skill >= tn).probability(True)
    assert odds.full_success == Fraction(stat_ok * skill_ok)
    assert odds.failure == Fraction((1 - stat_ok) * (1 - skill_ok))
    assert odds.partial_stat_short == Fraction((1 - stat_ok) * skill_ok)
    assert odds.threat == Fraction(1, 10)


def test_threat_outcomes_follow_the_policy() -> None:
    odds = check_odds(Check(stat=5, skill=5, tn=10, fate_dice=1, activate_threat="always"))
    # Doubles 1..4 fail, 5..10 succeed fully.
    assert odds.final["catastrophic_failure"] == Fraction(4, 100)
    assert odds.final["critical_success"] == Fraction(6, 100)
    none = check_odds(Check(stat=5, skill=5, tn=10, fate_dice=0, activate_threat="always"))
    assert "critical_success" not in none.final


def brute_force_periods(spec: ComplexCheck) -> dict[int, Fraction]:
    counts: Counter[int] = Counter()
    rolls = list(itertools.product(range(1, 11), repeat=2))
    for path in itertools.product(rolls, repeat=spec.max_periods):
        dice = SuppliedDice({"stat": [r[0] for r in path], "skill": [r[1] for r in path]})
        outcome = resolve_complex_check(spec, dice)
        counts[outcome.completed_in or 0] += 1  # unused dice of a finished path are fine here
    total = 100**spec.max_periods
    return {k: Fraction(v, total) for k, v in counts.items() if k}


@pytest.mark.parametrize(
    "fields",
    [
        {"stat": 4, "skill": 5, "tn": 10, "required_successes": 3},
        {
            "stat": 2,
            "skill": 6,
            "tn": 10,
            "required_successes": 2,
            "fate_dice": 1,
            "activate_threat": "always",
            "fate_per_critical": 1,
        },
        {
            "stat": 5,
            "skill": 5,
            "tn": 11,
            "required_successes": 4,
            "fate_dice": 2,
            "activate_threat": "on_success",
            "fate_per_critical": 2,
        },
    ],
)
def test_complex_odds_match_every_path(fields: dict[str, Any]) -> None:
    spec = ComplexCheck(max_periods=2, **fields)
    assert complex_odds(spec).completed_in == brute_force_periods(spec)


def test_complex_odds_sum_to_one() -> None:
    spec = ComplexCheck(
        stat=3,
        skill=3,
        tn=11,
        required_successes=30,
        max_periods=60,
        fate_dice=10,
        activate_threat="always",
        fate_per_critical=3,
    )
    odds = complex_odds(spec)
    assert sum(odds.completed_in.values()) + odds.not_within_cap == 1
    # The fastest path: four criticals (fate spent 3+3+3+1: 5+5+5+4 successes) and six full
    # successes (2 each): 10 periods.
    assert min(odds.completed_in) == 10


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"stat": 5, "skill": 3}, {"stat": 3, "skill": 5}),  # both make headway
        (
            {"stat": 4, "skill": 4, "fate_dice": 1, "activate_threat": "always"},
            {
                "stat": 4,
                "skill": 2,
                "skill_trick": 2,
                "fate_dice": 1,
                "activate_threat": "on_failure",
            },
        ),
        ({"stat": 0, "skill": 9, "stat_trick": -3}, {"stat": 9, "skill": 0}),
    ],
)
def test_contest_odds_match_every_roll(a: dict[str, Any], b: dict[str, Any]) -> None:
    contest = ContestedCheck(a=Contender(**a), b=Contender(**b))
    truth: dict[str, Counter[str]] = {k: Counter() for k in ("stat", "skill", "a", "b")}
    for faces in itertools.product(range(1, 11), repeat=4):
        dice = SuppliedDice(
            {
                "a.stat": [faces[0]],
                "a.skill": [faces[1]],
                "b.stat": [faces[2]],
                "b.skill": [faces[3]],
            }
        )
        outcome = resolve_contest(contest, dice)
        truth["stat"][outcome.stat_winner] += 1
        truth["skill"][outcome.skill_winner] += 1
        truth["a"][outcome.a.final] += 1
        truth["b"][outcome.b.final] += 1
    odds = contest_odds(contest)
    for key, got in (
        ("stat", odds.stat_winner),
        ("skill", odds.skill_winner),
        ("a", odds.a_final),
        ("b", odds.b_final),
    ):
        assert got == {name: Fraction(n, 10_000) for name, n in sorted(truth[key].items())}
