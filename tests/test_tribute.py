"""Tribute (seed 001): tests, opposed tests, Profit and Waste under both rules, options."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.mechanics import tribute as tribute_mechanic
from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules import RuleError, tribute
from fairroll.rules.tribute import OUTCOME_ORDER, all_choices, best_choice, resolve_test


def a_test(**fields: Any) -> tribute.Test:
    return tribute.Test(**{"reality": "d6", "rank": 0, **fields})


def supplied(**groups: list[int]) -> SuppliedDice:
    return SuppliedDice({key.replace("opponent_", "opponent."): v for key, v in groups.items()})


# --- "Tweaking the Core Mechanic": the +5 on d6 example ---------------------------------


def test_plus_five_on_d6_revised_gets_it_with_no_waste() -> None:
    # "This is because to get a +5 on d6s, you'd need FOCUS [6] and BURDEN [1]." "When you
    #  roll a Test, choose any BURDEN die that you like to serve as your BURDEN die for
    #  determining success or failure." "There is an incentive to choose the highest value
    #  that allows you to succeed." "Any other BURDEN dice with values that exceed the
    #  chosen die are considered Waste." "Dice that match are not Waste." (the other 1)
    # "So I altered things so that you determine Profit and Waste based on the dice that
    #  exceed the dice you choose, rather than allowing dice that meet or exceed the values
    #  you choose."
    # "if you rolled FOCUS [3,4,5,6] and BURDEN [1,1] and you needed a +5, you could get it
    #  with no Waste. There's no chance of Profit when you need a maximum roll"
    test = a_test(focus=4, burden=2, difficulty=5)
    outcome = resolve_test(test, supplied(focus=[3, 4, 5, 6], burden=[1, 1]))
    chosen = outcome.actor.chosen
    assert (chosen.focus, chosen.burden, chosen.result) == (6, 1, 5)
    assert (outcome.outcome, chosen.profit, chosen.waste) == ("match", 0, 0)


def test_reported_result_adds_the_rank_to_the_test() -> None:
    # "When you make a Test with no modifiers for aptitude, situation, or handicaps," "1.
    #  Roll 1 white "FOCUS" die, and 1 black "BURDEN" die." "2. Subtract the rolled value of
    #  the black BURDEN die from the value of the white FOCUS die."
    # "Add the final value of your test to your appropriate Attribute's Rank. Compare the
    #  result to your opposition's Result." The issue's case: rank 1, FOCUS 4, BURDEN 2
    #  against an opponent's 5 - 3 plus its Rank.
    test = a_test(rank=1, opponent=tribute.Opponent(rank=0))
    outcome = resolve_test(
        test, supplied(focus=[4], burden=[2], opponent_focus=[5], opponent_burden=[3])
    )
    chosen = outcome.actor.chosen
    assert (chosen.test, chosen.result) == (2, 3)
    assert (outcome.outcome, outcome.opposition_result) == ("win", 2)
    words = tribute_mechanic.read_test(test, outcome).text
    assert words == "Win with no Profit or Waste (+3 against +2; rank 1, dice +2)"


def test_reported_result_holds_a_negative_rank() -> None:
    # "Attributes are measured on an infinite logarithmic scale, with 0 being considered
    #  average for a human." -50..50 is fairroll's own range, refused past it, never cut.
    # "Add the final value of your test to your appropriate Attribute's Rank." At rank -50 a
    # +5 test is a Result of -45, and so it is reported and said.
    test = a_test(rank=-50, difficulty=-45)
    outcome = resolve_test(test, supplied(focus=[6], burden=[1]))
    assert (outcome.actor.chosen.test, outcome.actor.chosen.result) == (5, -45)
    assert outcome.outcome == "match"
    words = tribute_mechanic.read_test(test, outcome).text
    assert words == "Match with no Profit or Waste (-45 against -45; rank -50, dice +5)"
    with pytest.raises(msgspec.ValidationError, match="rank"):
        msgspec.convert({"reality": "d6", "rank": -51, "difficulty": 0}, tribute.Test)


def test_plus_five_on_d6_classic_gets_automatic_profit() -> None:
    # "Example: Using a d6 Reality Level, assume you need a +5 to deliver your Effect." "You
    #  have 4 FOCUS Dice and 3 BURDEN Dice." "To meet this roll, you'd need to get a 6 on
    #  your highest FOCUS die, and a 1 on your highest BURDEN Die." Classic: "Roll them and
    #  choose the die with the highest value as your FOCUS die, and then perform steps 2-5"
    # "Roll them and choose the highest value as your BURDEN die, and then perform steps
    #  2-5" "Profit can be gained when you Match or Win a Test." "Any FOCUS dice other than
    #  the first one that meet or exceed the highest BURDEN die are considered Profit."
    # "you would automatically get 3 Profit on your Test if you succeeded, because every
    #  FOCUS die would meet or exceed the BURDEN roll of 1"
    test = a_test(focus=4, burden=3, difficulty=5, profit_rule="classic")
    outcome = resolve_test(test, supplied(focus=[6, 4, 2, 3], burden=[1, 1, 1]))
    assert (outcome.outcome, outcome.actor.chosen.profit, outcome.actor.chosen.waste) == (
        "match",
        3,
        0,
    )
    assert outcome.actor.chosen_by == "rule"


def test_classic_profit_and_waste_together_when_the_highest_dice_tie() -> None:
    # "It is possible to receive both Profit and Waste to your action when the result of
    #  your highest FOCUS die equals the result of your highest BURDEN die."
    test = a_test(focus=2, burden=2, difficulty=-5, profit_rule="classic")
    outcome = resolve_test(test, supplied(focus=[4, 4], burden=[4, 4]))
    assert (outcome.actor.chosen.profit, outcome.actor.chosen.waste) == (1, 1)
    # "It is possible to receive both Profit and Waste to your action." (revised rule)
    # With equal Profit - Waste the service takes more Profit: 3 and 1 over 6 and 4.
    revised = resolve_test(
        a_test(focus=2, burden=2, difficulty=1), supplied(focus=[3, 6], burden=[1, 4])
    )
    assert (revised.actor.chosen.profit, revised.actor.chosen.waste) == (1, 1)


def test_choice_between_six_for_no_profit_and_three_for_three_profit() -> None:
    # "Roll them and choose any die you like as your FOCUS die, and then perform steps 2-5"
    # "When you roll a Test, choose any FOCUS die that you like to serve as your FOCUS die
    #  for determining success or failure." "There is an incentive to choose the lowest
    #  value that allows you to succeed." "Any other FOCUS dice with values that exceed the
    #  chosen die are considered Profit." "Dice that match are not Profit."
    # "if you rolled [3,4,5,6] on your FOCUS dice, you'd get to choose between using 6 and
    #  getting no Profit, and using 3, and getting 3 Profit, or anything in between"
    choices = all_choices((3, 4, 5, 6), (1,), need=-10, failure_counts=False)
    by_focus = {c.focus: c.profit for c in choices}
    assert by_focus == {3: 3, 4: 2, 5: 1, 6: 0}
    # "you'd choose the most optimal option": all Win, so 3 with 3 Profit.
    assert choices[0].focus == 3
    (pair,) = [
        c for c in all_choices((3, 3, 6), (1,), need=0, failure_counts=False) if c.focus == 3
    ]
    assert pair.profit == 1  # the other 3 matches: not Profit
    # When only the 6 Wins, the 6 is used, and the undominated alternatives are offered.
    outcome = resolve_test(
        a_test(focus=4, difficulty=4, trash_is_treasure=True, failure_counts=True),
        supplied(focus=[3, 4, 5, 6], burden=[1]),
    )
    assert (outcome.actor.chosen.focus, outcome.outcome) == (6, "win")
    offered = {(c.focus, c.outcome, c.profit) for c in outcome.actor.alternatives}
    assert offered == {(6, "win", 0), (5, "match", 1), (3, "fail", 3)}


def test_a_named_choice_is_used_as_given() -> None:
    # "Roll them and choose any value you like as your BURDEN die, and then perform steps
    #  2-5" (and so the FOCUS die): with supplied dice, the roller may name both.
    test = a_test(focus=4, difficulty=-10, choice=tribute.ExplicitChoice(focus=6, burden=1))
    outcome = resolve_test(test, supplied(focus=[3, 4, 5, 6], burden=[1]))
    assert (outcome.actor.chosen.focus, outcome.actor.chosen_by) == (6, "request")
    with pytest.raises(RuleError) as error:
        bad = a_test(focus=4, difficulty=-10, choice=tribute.ExplicitChoice(focus=2, burden=1))
        resolve_test(bad, supplied(focus=[3, 4, 5, 6], burden=[1]))
    assert error.value.field == "choice.focus"


# --- Option 1a's examples ---------------------------------------------------------------


def example_1(rule: str) -> tribute.TestOutcome:
    # "The Player rolls 3 FOCUS dice [5,3,2] and 2 BURDEN dice [5,5] ... The GM rolls 1
    #  FOCUS die [4] and 1 BURDEN die [2], for a roll of +2"
    test = a_test(
        focus=3,
        burden=2,
        opponent=tribute.Opponent(name="GM", rank=0),
        profit_rule=rule,
        trash_is_treasure=True,
        failure_counts=True,
    )
    dice = supplied(focus=[5, 3, 2], burden=[5, 5], opponent_focus=[4], opponent_burden=[2])
    return resolve_test(test, dice)


def test_option_1a_example_1_under_the_rule_text() -> None:
    # "When you Fail a Test, you should still count up any Profit and Waste." "However,
    #  since you can't spend it on Effects, you must give it all to the opposition as
    #  described in "My Trash is your Treasure...""
    # "Both the Player and the GM are rolling to modify an Attribute at Rank 0 - the roll
    #  will be the final result." "The GM rolls 1 FOCUS die [4] and 1 BURDEN die [2], for a
    #  roll of +2, and no Profit or Waste." "The Player Failed, and so has nowhere to spend
    #  the Profit, other than to give it to the Opposition." "His successful roll is now
    #  mitigated." (under the classic rule by the Waste, which the GM gets as Profit)
    # The example says "a roll of 0 with 1 Profit": neither rule gives that.
    # Revised: the Player cannot reach +2 (at best 5 - 5 = 0), so he Fails and, giving
    # everything away, uses his 2 (Profit 2: the 5 and the 3) and a 5 (no Waste).
    revised = example_1("revised")
    assert revised.outcome == "fail"
    assert revised.opposition_result == 2
    assert (revised.actor.chosen.focus, revised.actor.chosen.burden) == (2, 5)
    assert (revised.given_to_opposition.profit, revised.given_to_opposition.waste) == (2, 0)
    assert revised.opposition_effect is not None
    assert (revised.opposition_effect.profit, revised.opposition_effect.waste) == (0, 2)
    # Classic: highest dice 5 - 5 = 0; the other 5 meets the highest FOCUS die: 1 Waste,
    # which the GM receives as 1 Profit.
    classic = example_1("classic")
    assert (classic.actor.chosen.result, classic.outcome) == (0, "fail")
    assert (classic.given_to_opposition.profit, classic.given_to_opposition.waste) == (0, 1)
    assert classic.opposition_effect is not None
    assert (classic.opposition_effect.profit, classic.opposition_effect.waste) == (1, 0)


def example_2(rule: str) -> tribute.TestOutcome:
    # "The Player rolls 2 FOCUS dice [3,3] and 3 BURDEN dice [6,5,1] for a result of -3
    #  with 1 Waste. The GM rolls 1 FOCUS die [5] and 1 BURDEN die [1] for a roll of +4."
    test = a_test(
        focus=2,
        burden=3,
        opponent=tribute.Opponent(name="GM", rank=0),
        profit_rule=rule,
        trash_is_treasure=True,
        failure_counts=True,
    )
    dice = supplied(focus=[3, 3], burden=[6, 5, 1], opponent_focus=[5], opponent_burden=[1])
    return resolve_test(test, dice)


def test_option_1a_example_2_follows_the_classic_rule() -> None:
    # "The Player rolls 2 FOCUS dice [3,3] and 3 BURDEN dice [6,5,1] for a result of -3 with
    #  1 Waste." "The GM rolls 1 FOCUS die [5] and 1 BURDEN die [1] for a roll of +4." "The
    #  Effect the GM was going for is that much more powerful." Classic: "Waste can apply
    #  when you Match or Win a Test." "Any BURDEN dice other than the first one that meet or
    #  exceed the highest FOCUS die are considered Waste."
    classic = example_2("classic")
    assert (classic.actor.chosen.result, classic.actor.chosen.waste) == (-3, 1)
    assert classic.opposition_result == 4
    # "the GM now has a roll of +4 with 1 Profit"
    assert classic.opposition_effect is not None
    assert classic.opposition_effect.profit == 1
    # Under the revised rule the Player uses the 6 and has no Waste to give.
    revised = example_2("revised")
    assert (revised.actor.chosen.result, revised.actor.chosen.waste) == (-3, 0)
    assert revised.opposition_effect is not None
    assert revised.opposition_effect.profit == 0


# --- reality levels, effects, options ---------------------------------------------------


@pytest.mark.parametrize(
    ("reality", "sides"), [("d4", 4), ("d6", 6), ("d8", 8), ("d10", 10), ("d12", 12)]
)
def test_reality_levels_roll_their_die(reality: str, sides: int) -> None:
    # "In every campaign, there will be a choice of which dice to use, depending on the
    #  reality level desired." d4s- Mundane Reality Level. d6s- Heroic Reality Level. d8s-
    #  Pulpy Reality Level. d10s- Cinematic Reality Level. d12s- Over-the-top Reality Level.
    # "When you are above average at something or the situation make something easier, you
    #  receive up to 5 additional white FOCUS dice." "Add these dice to the 1 that you would
    #  otherwise roll for an unmodified test." "This gives a possible total of 6 white
    #  dice." "When you are below average at something or the situation makes something
    #  harder, you receive up to 5 additional black BURDEN Dice." "This gives a possible
    #  total of 6 black dice." "You can have up to 6 FOCUS dice and 6 BURDEN Dice at once,
    #  for a total of 12 dice to be rolled."
    dice = SeededDice(f"reality-{reality}")
    outcome = resolve_test(a_test(reality=reality, focus=6, burden=6, difficulty=0), dice)
    assert outcome.sides == sides
    assert all(d.sides == sides and 1 <= d.face <= sides for d in dice.dice)
    assert len(dice.dice) == 12
    for pool in ("focus", "burden"):
        with pytest.raises(msgspec.ValidationError, match=pool):
            msgspec.convert({"reality": reality, "rank": 0, pool: 7, "difficulty": 0}, tribute.Test)


@pytest.mark.parametrize(
    ("effect_rank", "focus", "burden", "rank_after"),
    [(5, [1, 4, 5, 6], [1], 5), (1, [6], [1, 2, 3, 4], 0), (3, [2, 5], [1, 3], 3)],
)
def test_effect_rank_after_profit_and_waste_stays_within_0_to_5(
    effect_rank: int, focus: list[int], burden: list[int], rank_after: int
) -> None:
    # "Effect Ranks are independent of Attribute ranks, and range from 1-5." "When you are
    #  successful in a Test, you deliver the Effect at the rank you bought it at, unless
    #  the dice modify the rank upwards or downwards." "Profit can be added to the Rank of
    #  any Features in the Effect you're Testing." "Waste is subtracted from the Rank of any
    #  Features in the Effect you're Testing." "Profit can't raise an Effect or Feature of
    #  an Effect's final Rank beyond 5." "Waste can't lower an Effect or Feature of an
    #  Effect's final Rank below 0 (Non-existent)." "Profit can cancel Waste out on a 1 for
    #  1 basis at your option, but you can also apply both to separate Features of Effects."
    # "Profit can't raise an Effect ... beyond 5"; "Waste can't lower ... below 0"
    test = a_test(
        focus=len(focus),
        burden=len(burden),
        difficulty=-20,
        effect_rank=effect_rank,
        choice=tribute.ExplicitChoice(focus=min(focus), burden=min(burden)),
    )
    outcome = resolve_test(test, supplied(focus=focus, burden=burden))
    assert outcome.actor_effect.applies
    assert outcome.actor_effect.rank_after == rank_after


@pytest.mark.parametrize(
    ("effect_rank", "focus", "burden", "said"),
    [
        (5, [1, 4, 5, 6], [1], "Effect rank 5 to 5 (not 8: Profit can't raise an Effect beyond 5)"),
        (1, [6], [1, 2, 3, 4], "Effect rank 1 to 0 (not -2: Waste can't lower an Effect below 0)"),
    ],
)
def test_an_effect_rank_held_at_the_seeds_bound_is_said_in_words(
    effect_rank: int, focus: list[int], burden: list[int], said: str
) -> None:
    """A rank the dice would push past the seed's bounds is held there ("Profit can't raise
    an Effect or Feature of an Effect's final Rank beyond 5"; "Waste can't lower an
    Effect or Feature of an Effect's final Rank below 0"), never quietly: the answer's
    words give the rank the dice asked for and the sentence that holds it."""
    from fairroll.mechanics import MECHANICS  # noqa: PLC0415

    test = a_test(
        focus=len(focus),
        burden=len(burden),
        difficulty=-20,
        effect_rank=effect_rank,
        choice=tribute.ExplicitChoice(focus=min(focus), burden=min(burden)),
    )
    outcome = resolve_test(test, supplied(focus=focus, burden=burden))
    text = MECHANICS["tribute.test"].read(test, outcome).text
    assert text.endswith(said)
    within = a_test(
        focus=2,
        burden=2,
        difficulty=-20,
        effect_rank=3,
        choice=tribute.ExplicitChoice(focus=2, burden=1),
    )
    plain = MECHANICS["tribute.test"].read(
        within, resolve_test(within, supplied(focus=[2, 5], burden=[1, 3]))
    )
    assert plain.text.endswith("Effect rank 3 to 3")


def test_failure_gives_no_effect_and_no_profit_without_option_1a() -> None:
    # Classic: "If you Fail a Test, Waste is irrelevant- nothing happens."
    outcome = resolve_test(a_test(difficulty=9, effect_rank=3), supplied(focus=[2], burden=[5]))
    assert outcome.outcome == "fail"
    assert not outcome.actor_effect.applies
    assert (outcome.actor.chosen.profit, outcome.actor.chosen.waste) == (0, 0)


def test_classic_option_1_may_give_only_on_a_match() -> None:
    # "When you have Profit on a Test, you have the option to apply it to the opposition,
    #  where it's treated as Waste." "Conversely, you can give your Waste to the opposition,
    #  which they use as if it was Profit."
    # "Unless you're using 'Profit and Waste on a Failure', below, this only applies when
    #  you Match."
    match = resolve_test(
        a_test(difficulty=3, trash_is_treasure=True, profit_rule="classic"),
        supplied(focus=[4], burden=[1]),
    )
    assert (match.outcome, match.may_give_to_opposition) == ("match", True)
    win = resolve_test(
        a_test(difficulty=0, trash_is_treasure=True, profit_rule="classic"),
        supplied(focus=[4], burden=[1]),
    )
    assert (win.outcome, win.may_give_to_opposition) == ("win", False)


def test_revised_rule_profit_may_go_to_the_opposition_and_must_on_a_fail() -> None:
    # Revised core: "Finally, Profit can be given to the opposition, where it serves as
    #  Waste. This is the only option for using Profit when you Fail." (and so for Waste)
    win = resolve_test(a_test(difficulty=0), supplied(focus=[4], burden=[1]))
    assert (win.outcome, win.may_give_to_opposition) == ("win", True)
    # Without Option 1a, a Fail still counts its Profit and Waste, and gives them all.
    fail = resolve_test(
        a_test(focus=3, burden=2, opponent=tribute.Opponent(rank=0)),
        supplied(focus=[5, 3, 2], burden=[5, 5], opponent_focus=[4], opponent_burden=[2]),
    )
    assert fail.outcome == "fail"
    given = (fail.given_to_opposition.profit, fail.given_to_opposition.waste)
    assert given == (fail.actor.chosen.profit, fail.actor.chosen.waste) != (0, 0)
    assert fail.actor_effect.applies is False
    classic = resolve_test(
        a_test(focus=3, burden=2, opponent=tribute.Opponent(rank=0), profit_rule="classic"),
        supplied(focus=[5, 3, 2], burden=[5, 5], opponent_focus=[4], opponent_burden=[2]),
    )
    assert (classic.given_to_opposition.profit, classic.given_to_opposition.waste) == (0, 0)


@pytest.mark.parametrize(
    ("allocation", "by"),
    [("standard", "roller"), ("leaf_on_the_wind", "gm"), ("enemy_mine", "opposition")],
)
def test_options_2_and_3_report_who_allocates(allocation: str, by: str) -> None:
    # "With this option, the GM spends all of your Profit and Waste for you, you have no
    #  control of where it goes." "With this option, Players choose how their opposition's
    #  Profit and Waste is spent, and their opposition does the same for them."
    outcome = resolve_test(a_test(difficulty=0, allocation=allocation), SeededDice("alloc"))
    assert outcome.allocated_by == by


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({}, "difficulty"),
        ({"difficulty": 1, "opponent": tribute.Opponent(rank=0)}, "difficulty"),
        ({"difficulty": 1, "failure_counts": True}, "failure_counts"),
        (
            {
                "difficulty": 1,
                "profit_rule": "classic",
                "choice": tribute.ExplicitChoice(focus=1, burden=1),
            },
            "choice",
        ),
    ],
)
def test_inconsistent_requests_are_rule_errors(fields: dict[str, Any], field: str) -> None:
    # "This rule requires the use of "My Trash is Your Treasure..."" (failure_counts alone)
    with pytest.raises(RuleError) as error:
        resolve_test(a_test(**fields), SeededDice("x"))
    assert error.value.field == field


# --- opposed tests ------------------------------------------------------------------------


def test_opposed_test_match_applies_both_effects() -> None:
    # "When you Win, only you apply your Effect, and when you Match, both parties get to
    #  apply their Effects."
    test = a_test(
        rank=1,
        opponent=tribute.Opponent(rank=2, effect_rank=2),
        effect_rank=3,
    )
    # Actor 1 + 4 - 2 = 3; opponent at best 2 + 3 - 2 = 3: a Match.
    outcome = resolve_test(
        test, supplied(focus=[4], burden=[2], opponent_focus=[3], opponent_burden=[2])
    )
    assert outcome.outcome == "match"
    assert outcome.actor_effect.applies
    assert outcome.opposition_effect is not None and outcome.opposition_effect.applies


opposed = st.builds(
    lambda rank, o_rank, nf, nb, of, ob, rule: a_test(
        reality="d8",
        rank=rank,
        focus=nf,
        burden=nb,
        opponent=tribute.Opponent(rank=o_rank, focus=of, burden=ob),
        profit_rule=rule,
        trash_is_treasure=True,
        failure_counts=True,
    ),
    st.integers(-3, 3),
    st.integers(-3, 3),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from(["revised", "classic"]),
)


@given(opposed, st.text(min_size=1, max_size=12))
def test_opposed_outcome_is_the_comparison_of_final_results(test: tribute.Test, seed: str) -> None:
    # "5. If your result is higher you Win the test, if your Result is lower you Fail, and
    #  if your results are equal, you Match."
    outcome = resolve_test(test, SeededDice(seed))
    a = outcome.actor.chosen.result
    o = outcome.opposition_result
    expected = "win" if a > o else "match" if a == o else "fail"
    assert outcome.outcome == expected
    assert outcome.opposition is not None
    # Result identity on both sides: the dice make the test, the Rank is added to it.
    for side in (outcome.actor, outcome.opposition):
        assert side.chosen.test == side.chosen.focus - side.chosen.burden
        assert side.chosen.result == side.rank + side.chosen.test
    assert outcome.opposition.chosen.result == o
    assert outcome.actor.chosen.focus in outcome.actor.focus_dice
    assert outcome.actor.chosen.burden in outcome.actor.burden_dice
    assert resolve_test(test, SeededDice(seed)) == outcome  # replay


hands = st.lists(st.integers(1, 12), min_size=1, max_size=6).map(tuple)


@given(hands, hands, st.integers(-12, 12), st.booleans())
def test_revised_choice_is_never_worse_than_classic(
    focus: tuple[int, ...], burden: tuple[int, ...], need: int, counts: bool
) -> None:
    revised = best_choice(focus, burden, need=need, rule="revised", failure_counts=counts)
    classic = best_choice(focus, burden, need=need, rule="classic", failure_counts=counts)
    assert OUTCOME_ORDER[revised.outcome] >= OUTCOME_ORDER[classic.outcome]
    for choice in (revised, classic):
        assert choice.profit >= 0 and choice.waste >= 0
        assert choice.profit <= len(focus) - 1 and choice.waste <= len(burden) - 1
