"""Faster, Better, Cheaper rolls and conflicts (seed 000): every worked example, every rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules import RuleError
from fairroll.rules.fbc import (
    Conflict,
    Participant,
    Roll,
    resolve_conflict,
    resolve_roll,
    score_roll,
)


def changes(outcome: object) -> dict[str, int]:
    return {c.cause: c.change for c in outcome.pool_changes}  # type: ignore[attr-defined]


# --- the pit climb -----------------------------------------------------------------------


def test_pit_climb_five_of_ten_dice() -> None:
    # "He rolls and gets 2 1 1 4 5. Two Successes." ... "Billy's pool drops to 7 dice"
    outcome = score_roll(Roll(pool=10, risk=5), (2, 1, 1, 4, 5), ())
    assert outcome.successes == 2
    assert outcome.facts == 2
    assert outcome.new_pool == 7
    assert changes(outcome) == {"failed_dice": -3}


def test_pit_climb_with_a_six_instead_of_the_five() -> None:
    # "if ... Joe had rolled a 6 instead of an 5, Billy's dice pool would have been 8"
    outcome = score_roll(Roll(pool=10, risk=5), (2, 1, 1, 4, 6), ())
    assert outcome.new_pool == 8
    assert changes(outcome) == {"failed_dice": -3, "sixes": 1}


def test_pit_climb_converting_the_second_success() -> None:
    # "using his second success to increase his pool by 1, meaning ... 8"
    outcome = score_roll(Roll(pool=10, risk=5, convert=1), (2, 1, 1, 4, 5), ())
    assert (outcome.facts, outcome.converted, outcome.new_pool) == (1, 1, 8)


def test_better_climber_still_loses_the_2() -> None:
    # "if Billy was Better at climbing, the 2 he rolled would be a Success, but it would
    #  still be removed from his pool."
    outcome = score_roll(Roll(pool=10, risk=5, better=1), (2, 1, 1, 4, 5), ())
    two = outcome.dice[0]
    assert (two.raw, two.modified, two.success, two.fate) == (2, 3, True, "lost")
    assert outcome.successes == 3
    assert outcome.new_pool == 7


# --- the rules one by one ----------------------------------------------------------------


def test_target_number_is_met_or_beaten() -> None:
    outcome = score_roll(Roll(pool=6, risk=3, target=4), (3, 4, 6), ())
    assert [d.success for d in outcome.dice] == [False, True, True]


def test_at_least_one_success_stays_a_fact() -> None:
    # "At least one Success must be used for narrating a fact"
    outcome = score_roll(Roll(pool=10, risk=5, convert=5), (3, 4, 1, 1, 1), ())
    assert (outcome.successes, outcome.converted, outcome.facts) == (2, 1, 1)


def test_nothing_to_convert_without_successes() -> None:
    outcome = score_roll(Roll(pool=10, risk=2, convert=3), (1, 2), ())
    assert (outcome.converted, outcome.facts) == (0, 0)


def test_a_conversion_the_seed_does_not_allow_is_said_in_words() -> None:
    """Fewer successes converted than the player asked for is the seed's limit ("At least
    one Success must be used for narrating a fact"), never a quiet change: the words say
    how many were asked, how many could be, and why."""
    from fairroll.mechanics import MECHANICS  # noqa: PLC0415

    read = MECHANICS["fbc.roll"].read
    asked = Roll(pool=10, risk=5, convert=5)
    outcome = score_roll(asked, (3, 4, 1, 1, 1), ())
    assert read(asked, outcome).text == (
        "2 successes, 1 converted of 5 asked (one success always stays a fact); Pool 8"
    )
    none = Roll(pool=10, risk=2, convert=3)
    assert read(none, score_roll(none, (1, 2), ())).text == (
        "0 successes, 0 converted of 3 asked (one success always stays a fact); Pool 8"
    )
    granted = Roll(pool=10, risk=5, convert=1)
    assert read(granted, score_roll(granted, (3, 4, 1, 1, 1), ())).text == (
        "2 successes, 1 converted; Pool 8"
    )


@pytest.mark.parametrize(("faster", "gain"), [(0, 1), (1, 2), (2, 3)])
def test_each_natural_six_adds_one_plus_faster(faster: int, gain: int) -> None:
    # "on a roll of 6 the pool is increased by two instead of one for a Faster character"
    # "gets three dice for every 6 rolled" with Faster twice.
    outcome = score_roll(Roll(pool=5, risk=2, faster=faster), (6, 6), ())
    assert changes(outcome) == {"sixes": 2 * gain}


def test_only_a_natural_six_adds_dice() -> None:
    # "for determining if the pool increases, consider only the raw roll"
    outcome = score_roll(Roll(pool=5, risk=1, better=2), (5,), ())
    assert outcome.dice[0].modified == 7
    assert "sixes" not in changes(outcome)


@pytest.mark.parametrize(("cheaper", "kept"), [(1, 1), (2, 2), (4, 3)])
def test_cheaper_keeps_that_many_failed_dice(cheaper: int, kept: int) -> None:
    outcome = score_roll(Roll(pool=8, risk=4, cheaper=cheaper), (1, 2, 2, 5), ())
    assert changes(outcome) == {"failed_dice": -3, "cheaper": kept}
    assert outcome.new_pool == 8 - 3 + kept


def test_expensive_loses_successful_dice() -> None:
    # "Expensive characters lose one successful die from their pool"
    outcome = score_roll(Roll(pool=8, risk=4, expensive=2), (1, 4, 5, 6), ())
    assert [d.fate for d in outcome.dice] == [
        "lost",
        "lost_to_expensive",
        "lost_to_expensive",
        "kept",
    ]
    assert outcome.new_pool == 8 - 1 - 2 + 1


def test_worse_subtracts_but_the_raw_face_decides_the_loss() -> None:
    # "the unmodified roll determines whether the die exits the pool or not"
    outcome = score_roll(Roll(pool=5, risk=2, worse=1), (3, 4), ())
    assert [(d.modified, d.success, d.fate) for d in outcome.dice] == [
        (2, False, "kept"),
        (3, True, "kept"),
    ]
    assert outcome.new_pool == 5


@pytest.mark.parametrize(
    ("slower", "chance", "extra"),
    [(1, 3, True), (1, 4, False), (2, 2, True), (2, 3, False), (3, 1, True), (3, 2, False)],
)
def test_slower_six_rolls_a_chance_die(slower: int, chance: int, extra: bool) -> None:
    # "they get the extra die on 1-3", "Slower x2 ... 1-2", "Slower x3 only on a 1"
    dice = SuppliedDice({"risk": [6], "chance": [chance]})
    outcome = resolve_roll(Roll(pool=5, risk=1, slower=slower), dice)
    dice.check_all_used()
    assert outcome.chance_dice[0].extra_die is extra
    assert outcome.new_pool == 5 + extra


def test_slower_four_times_rolls_no_chance_die_and_gains_nothing() -> None:
    # "a character with Slower x4 doesn't get extra dice on a 6 at all"
    dice = SeededDice("slow")
    outcome = score_roll(Roll(pool=5, risk=1, slower=4), (6,), ())
    assert outcome.chance_dice == ()
    assert outcome.new_pool == 5
    resolve_roll(Roll(pool=5, risk=3, slower=4), dice)
    assert {d.group for d in dice.dice} == {"risk"}


@pytest.mark.parametrize(("style_as", "field"), [("better", "modified"), ("faster", "sixes")])
def test_style_adjective_counts_as_one_more(style_as: str, field: str) -> None:
    outcome = score_roll(Roll(pool=5, risk=1, style_as=style_as), (6,), ())  # type: ignore[arg-type]
    if field == "modified":
        assert outcome.dice[0].modified == 7
    else:
        assert changes(outcome)["sixes"] == 2


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"faster": 1, "slower": 1}, "slower"),
        ({"better": 2, "worse": 1}, "worse"),
        ({"cheaper": 1, "expensive": 1}, "expensive"),
        ({"style_as": "faster", "slower": 1}, "slower"),
    ],
)
def test_opposite_adjectives_are_a_rule_error(fields: dict[str, object], field: str) -> None:
    with pytest.raises(RuleError) as error:
        score_roll(Roll(pool=5, risk=1, **fields), (3,), ())  # type: ignore[arg-type]
    assert error.value.field == field


def test_risking_more_than_the_pool_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as error:
        resolve_roll(Roll(pool=3, risk=4), SeededDice("x"))
    assert error.value.field == "risk"


def test_pool_never_drops_below_one() -> None:
    # "A character's pool can never go below 1."
    outcome = score_roll(Roll(pool=2, risk=2), (1, 1), ())
    assert outcome.new_pool == 1
    assert changes(outcome) == {"failed_dice": -2, "floor": 1}


rolls = st.builds(
    Roll,
    pool=st.integers(1, 40),
    risk=st.integers(1, 30),
    target=st.integers(1, 12),
    faster=st.integers(0, 3),
    better=st.integers(0, 3),
    cheaper=st.integers(0, 3),
    convert=st.integers(0, 30),
).filter(lambda roll: roll.risk <= roll.pool)
negative_rolls = st.builds(
    Roll,
    pool=st.integers(1, 40),
    risk=st.integers(1, 30),
    slower=st.integers(0, 5),
    worse=st.integers(0, 3),
    expensive=st.integers(0, 3),
).filter(lambda roll: roll.risk <= roll.pool)


@given(rolls | negative_rolls, st.text(min_size=1, max_size=20))
def test_roll_invariants(roll: Roll, seed: str) -> None:
    outcome = resolve_roll(roll, SeededDice(seed))
    assert outcome.new_pool >= 1
    assert outcome.successes <= roll.risk
    assert outcome.facts + outcome.converted == outcome.successes
    assert outcome.successes == 0 or outcome.facts >= 1
    floor = sum(c.change for c in outcome.pool_changes if c.cause == "floor")
    assert outcome.new_pool == roll.pool + sum(c.change for c in outcome.pool_changes)
    assert floor == 0 or outcome.new_pool == 1
    # Replay: the same seed gives the same roll.
    assert resolve_roll(roll, SeededDice(seed)) == outcome


# --- PC-vs-PC conflict ---------------------------------------------------------------------


def joe_sue_fred(fred_narrates: str = "last") -> tuple[Conflict, SuppliedDice]:
    conflict = Conflict(
        participants=[
            Participant(name="Joe", pool=5, risk=5, faster=1, narrate="first"),
            Participant(name="Sue", pool=5, risk=5, convert=1, narrate="first"),
            Participant(name="Fred", pool=5, risk=5, narrate=fred_narrates),  # type: ignore[arg-type]
        ]
    )
    # The example's "John rolls 2 1 5 1 6" is Billy's (Joe's) roll: "Joe has 3 dice
    # (because of the 6 he rolled)".
    dice = SuppliedDice(
        {"p1.risk": [2, 1, 5, 1, 6], "p2.risk": [1, 2, 2, 3, 5], "p3.risk": [3, 2, 1, 4, 5]}
    )
    return conflict, dice


def test_conflict_example_order_turns_and_pools() -> None:
    conflict, dice = joe_sue_fred()
    outcome = resolve_conflict(conflict, dice)
    dice.check_all_used()
    # "Joe decides to narrate first. Fred got more successes than Sue, and decides to go
    #  last. ... So the order is Joe, Sue, and then Fred."
    assert outcome.choosing_order == ("Joe", "Fred", "Sue")
    assert outcome.narration_order == ("Joe", "Sue", "Fred")
    assert [(t.participant, t.action) for t in outcome.turns] == [
        ("Joe", "fact"),
        ("Sue", "fact"),
        ("Fred", "fact"),
        ("Joe", "fact"),
        ("Sue", "pass"),
        ("Fred", "fact"),
        ("Fred", "fact"),
    ]
    pools = {p.name: p.roll.new_pool for p in outcome.participants}
    # "Sue also has 3 dice ... and Fred also has 3 dice"
    assert (pools["Sue"], pools["Fred"]) == (3, 3)
    # The example says Joe ends with 3, but Billy's Trait is Faster and "on a roll of 6
    # the pool is increased by two instead of one for a Faster character": 5 - 3 + 2 = 4.
    assert pools["Joe"] == 4


def test_a_later_chooser_cannot_trump_an_earlier_choice() -> None:
    # "If he decided to go 'first', he would go after Joe"
    conflict, dice = joe_sue_fred(fred_narrates="first")
    outcome = resolve_conflict(conflict, dice)
    assert outcome.narration_order == ("Joe", "Fred", "Sue")


def test_equal_speed_and_successes_are_broken_by_a_die() -> None:
    conflict = Conflict(
        participants=[
            Participant(name="Ann", pool=3, risk=2, narrate="last"),
            Participant(name="Bob", pool=3, risk=2, narrate="last"),
        ]
    )
    dice = SuppliedDice({"p1.risk": [4, 1], "p2.risk": [5, 2], "tiebreak": [2]})
    outcome = resolve_conflict(conflict, dice)
    dice.check_all_used()
    assert outcome.tiebreaks[0].chosen == "Bob"
    assert outcome.choosing_order == ("Bob", "Ann")
    assert outcome.narration_order == ("Ann", "Bob")


def test_slower_participant_chooses_after_an_average_one() -> None:
    # "'Slower' characters ... go last where turn order is important"
    conflict = Conflict(
        participants=[
            Participant(name="Slow", pool=5, risk=3, slower=1, narrate="first"),
            Participant(name="Plain", pool=5, risk=1, narrate="last"),
        ]
    )
    outcome = resolve_conflict(conflict, SuppliedDice({"p1.risk": [5, 5, 5], "p2.risk": [1]}))
    assert outcome.choosing_order == ("Plain", "Slow")


def test_participant_names_must_differ() -> None:
    conflict = Conflict(
        participants=[
            Participant(name="Ann", pool=3, risk=1),
            Participant(name="Ann", pool=3, risk=1),
        ]
    )
    with pytest.raises(RuleError) as error:
        resolve_conflict(conflict, SeededDice("x"))
    assert error.value.field == "participants[1].name"


@given(st.text(min_size=1, max_size=10), st.integers(2, 8))
def test_conflict_invariants(seed: str, size: int) -> None:
    conflict = Conflict(
        participants=[
            Participant(name=f"P{i}", pool=6, risk=1 + i % 6, convert=i % 3, narrate="last")
            for i in range(size)
        ]
    )
    outcome = resolve_conflict(conflict, SeededDice(seed))
    assert sorted(outcome.narration_order) == sorted(p.name for p in conflict.participants)
    for participant in outcome.participants:
        turns = [t for t in outcome.turns if t.participant == participant.name]
        assert len(turns) == participant.roll.successes
        actions = [t.action for t in turns]
        # A pass only after at least one fact.
        assert "pass" not in actions or actions.index("pass") > actions.index("fact")
        assert participant.roll.new_pool >= 1
    assert resolve_conflict(conflict, SeededDice(seed)) == outcome


def test_asked_names_every_input_that_changed_the_roll() -> None:
    from fairroll.mechanics import MECHANICS  # noqa: PLC0415

    read = MECHANICS["fbc.roll"].read
    asked = Roll(pool=5, risk=3, better=1, cheaper=2, convert=1, target=4)
    outcome = resolve_roll(asked, SuppliedDice({"risk": [4, 2, 6]}))
    said = read(asked, outcome).asked
    assert said == "Pool 5, risking 3 dice, Better 1, Cheaper 2, converting up to 1, target 4"
    plain = Roll(pool=10, risk=5)
    rolled = resolve_roll(plain, SuppliedDice({"risk": [1, 2, 3, 4, 5]}))
    assert read(plain, rolled).asked == "Pool 10, risking 5 dice"
