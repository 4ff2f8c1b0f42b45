"""Stat + Skill (seed 002), sentence by sentence: each test quotes the sentence it checks
on the rules (``fairroll.rules.stat_skill``), over every pair of dice or drawn checks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fairroll.mechanics import MECHANICS
from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules.stat_skill import (
    Check,
    ComplexCheck,
    Contender,
    ContestedCheck,
    activates,
    judge,
    resolve_complex_check,
    score_check,
    score_contest,
)

die = st.integers(1, 10)
rating = st.integers(0, 30)
tn = st.integers(1, 60)


@given(st.integers(-20, 60), st.integers(-20, 60), tn)
def test_totals_against_the_tn_give_failure_full_or_partial_success(
    stat_total: int, skill_total: int, target: int
) -> None:
    """ "If both totals are below the TN, the result is a failure." "If both totals are
    equal to or above the TN, the result is a full success." "If one total is equal to or
    above and one below, the result is a partial success." """
    result, short = judge(stat_total=stat_total, skill_total=skill_total, tn=target)
    reached = (stat_total >= target, skill_total >= target)
    if reached == (False, False):
        assert (result, short) == ("failure", None)
    elif reached == (True, True):
        assert (result, short) == ("full_success", None)
    else:
        assert result == "partial_success"
        assert short == ("stat" if stat_total < target else "skill")


@given(die, die)
def test_a_partial_success_is_still_a_success(stat_die: int, skill_die: int) -> None:
    """ "Note first and foremost that this is still a success.": a partial success reads
    as a success, and a threat on it activates when the table activates on successes."""
    check = Check(stat=8, skill=0, tn=11)  # the Stat side reaches 11 on a 3, the Skill never
    outcome = score_check(check, stat_die, skill_die, 0)
    words = MECHANICS["stat-skill.check"].read(check, outcome)
    if outcome.result == "partial_success":
        assert words.success is True and words.partial is True
        assert activates("on_success", outcome.result)
        assert not activates("on_failure", outcome.result)
    else:
        assert outcome.result == "failure" and words.success is False


@given(die, die, st.sampled_from(["never", "on_success", "on_failure", "always"]))
def test_doubles_are_a_threat_activated_by_spending_a_fate_die(
    stat_die: int, skill_die: int, policy: str
) -> None:
    """ "If the two dice roll doubles, it is called a threat." "A threat may be activated
    by spending a fate die.": a threat exactly on doubles; activated only with a fate die
    to spend, which it spends."""
    check = Check(stat=5, skill=5, tn=12, activate_threat=policy)  # type: ignore[arg-type]
    held = score_check(check, stat_die, skill_die, 1)
    broke = score_check(check, stat_die, skill_die, 0)
    assert held.threat == broke.threat == (stat_die == skill_die)
    assert not broke.threat_activated and broke.fate_dice_spent == 0
    wanted = held.threat and activates(check.activate_threat, held.result)
    assert held.threat_activated == wanted
    assert (held.fate_dice_spent, held.fate_dice_left) == ((1, 0) if wanted else (0, 1))


@given(die, tn)
def test_an_activated_threat_on_a_failure_or_full_success(face: int, target: int) -> None:
    """ "If the roll itself is a failure, then an activated threat becomes a catastrophic
    falure (e.g., a gun jams)." "If the roll is a full success, then the threat becomes a
    critical success (e.g., not only is the car repaired, it is improved)." """
    check = Check(stat=4, skill=4, tn=target, activate_threat="always")
    outcome = score_check(check, face, face, 1)
    assert outcome.threat_activated
    if outcome.result == "failure":
        assert outcome.final == "catastrophic_failure"
    if outcome.result == "full_success":
        assert outcome.final == "critical_success"


@given(rating, rating, rating, rating, die, die, die, die)
def test_a_contested_check_compares_stat_with_stat_and_skill_with_skill(
    a_stat: int, a_skill: int, b_stat: int, b_skill: int, d1: int, d2: int, d3: int, d4: int
) -> None:
    """ "The first is a contested check." "This is a case where two characters are vying
    against one another." "Simply compare the totals of the two characters, Stat versus
    Stat and Skill versus Skill.": each pair is won by the higher total, whatever the
    other pair's dice, and no TN enters."""
    contest = ContestedCheck(
        a=Contender(stat=a_stat, skill=a_skill), b=Contender(stat=b_stat, skill=b_skill)
    )
    outcome = score_contest(contest, d1, d2, d3, d4)
    a_totals, b_totals = (a_stat + d1, a_skill + d2), (b_stat + d3, b_skill + d4)
    for winner, ours, theirs in (
        (outcome.stat_winner, a_totals[0], b_totals[0]),
        (outcome.skill_winner, a_totals[1], b_totals[1]),
    ):
        assert winner == ("a" if ours > theirs else "b" if theirs > ours else "standoff")
    # A side that wins both pairs has a full success; the other a failure.
    if outcome.stat_winner == outcome.skill_winner == "a":
        assert (outcome.a.result, outcome.b.result) == ("full_success", "failure")


def test_the_gm_sets_a_tn_a_number_of_successes_and_a_period() -> None:
    """ "In addition to setting a TN for the task, the GM will set a number of successes,
    and a period (e.g., one check per hour of work).": each is the request's, and the
    time taken is counted in its periods."""
    check = ComplexCheck(stat=5, skill=5, tn=12, required_successes=3, period="1 hour")
    # 7+5 and 8+5 reach 12: a full success (2); 1+5 and 9+5: a partial (1); 3 in all.
    outcome = resolve_complex_check(check, SuppliedDice({"stat": [7, 1], "skill": [8, 9]}))
    assert [p.check.result for p in outcome.periods] == ["full_success", "partial_success"]
    assert (outcome.completed, outcome.completed_in, outcome.elapsed) == (True, 2, "2 x 1 hour")
    harder = ComplexCheck(stat=5, skill=5, tn=14, required_successes=3, period="1 day")
    slower = resolve_complex_check(harder, SuppliedDice({"stat": [7, 1, 9], "skill": [8, 9, 9]}))
    assert [p.successes_gained for p in slower.periods] == [0, 1, 2]
    assert slower.elapsed == "3 x 1 day"


@given(st.integers(1, 30), st.integers(1, 60), st.integers(1, 30), st.text(max_size=6))
def test_a_check_each_period_until_the_requisite_successes(
    required: int, periods: int, target: int, seed: str
) -> None:
    """ "Each period, the character will make a check." "Once the requisite number of
    successes has been achieved, the character is considered to have completed the
    check.": two dice a period, and rolling stops at the first period that reaches the
    number (or at the GM's cap), never before."""
    check = ComplexCheck(
        stat=6, skill=6, tn=target, required_successes=required, max_periods=periods
    )
    dice = SeededDice(seed)
    outcome = resolve_complex_check(check, dice)
    assert len(dice.dice) == 2 * len(outcome.periods)
    totals = [p.total for p in outcome.periods]
    assert all(total < required for total in totals[:-1])
    assert outcome.completed == (totals[-1] >= required)
    assert outcome.completed or len(outcome.periods) == periods
    assert outcome.completed_in == (len(totals) if outcome.completed else None)


def test_a_critical_spends_no_more_fate_dice_than_are_left() -> None:
    """ "A critical success will add one additional success per fate die spent.": the
    player asks to spend up to ``fate_per_critical`` on each; with fewer left, each one
    left is spent and counted, and the answer says how many were."""
    check = ComplexCheck(
        stat=4,
        skill=4,
        tn=10,
        required_successes=30,
        max_periods=2,
        fate_dice=4,
        activate_threat="on_success",
        fate_per_critical=3,
    )
    outcome = resolve_complex_check(check, SuppliedDice({"stat": [7, 8], "skill": [7, 8]}))
    first, second = outcome.periods
    assert [p.check.final for p in outcome.periods] == ["critical_success"] * 2
    assert first.successes_gained == 2 + 3  # three dice spent: four left, one left after
    # Only the activating die is left for the second: one more success, not the asked three.
    assert second.successes_gained == 2 + 1
    assert outcome.fate_dice_left == 0
