"""TFT contests (seed 004): every example in the text, and the invariants it states."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.odds.tft import contest_odds
from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules import RuleError
from fairroll.rules.tft import Contest, Contestant, compare_faces, dice_count, resolve_contest

hands = st.lists(st.integers(1, 6), min_size=1, max_size=12).map(tuple)


def test_roth_rolls_seven_dice_and_sheena_four() -> None:
    # "Roth has a DX of 16. Sheena has an IQ of 12. Both Thief and Master Thief
    #  will help the roll. Roth will roll 7 dice in the contest. Sheena will roll 4 dice."
    assert dice_count(Contestant(name="Roth", attribute=16, talents=2), "a") == 7
    assert dice_count(Contestant(name="Sheena", attribute=12), "b") == 4


def test_example_highest_die_wins_with_one_level() -> None:
    # "Player A rolls 7 dice and gets 6, 5, 5, 4, 2, 2 & 1. Player B rolls 5 dice and
    #  gets 5, 4, 4, 4 and 1. Player A gets a victory."
    result = compare_faces((6, 5, 5, 4, 2, 2, 1), (5, 4, 4, 4, 1))
    assert result.victor == "a"
    assert result.discarded_ties == ()
    assert result.deciding == (6, 5)
    assert result.victory_level == 1  # only the 6 is higher than every die of B


def test_example_all_of_a_tied_with_b_is_a_tie() -> None:
    # "Since all of player A's dice are tied with the four highest dice of B it is a tie."
    result = compare_faces((6, 4, 4, 3), (6, 4, 4, 3, 2))
    assert result.victor is None
    assert result.no_victor_reason == "ran_out_of_dice"
    assert result.discarded_ties == (6, 4, 4, 3)
    assert result.victory_level is None


def test_example_after_discarding_the_high_pair_a_wins_level_two() -> None:
    # "After discarding the high pair, player A wins. If the optional rules are being
    #  used player A wins with a level 2 victory."
    result = compare_faces((6, 4, 3, 1), (6, 1, 1))
    assert result.victor == "a"
    assert result.discarded_ties == (6,)
    assert result.deciding == (4, 1)
    assert result.victory_level == 2


def test_all_dice_tied_has_no_victor() -> None:
    # "If all dice are tied ... the contest does not have a victor."
    result = compare_faces((5, 3, 3), (3, 5, 3))
    assert result.victor is None
    assert result.no_victor_reason == "all_dice_tied"


def test_contest_with_supplied_dice_reports_sorted_faces_and_names() -> None:
    contest = Contest(
        a=Contestant(name="Roth", attribute=16, talents=2),
        b=Contestant(name="Sheena", attribute=12),
        victory_levels=True,
    )
    dice = SuppliedDice({"a": [1, 2, 2, 4, 5, 5, 6], "b": [4, 1, 4, 5]})
    outcome = resolve_contest(contest, dice)
    dice.check_all_used()
    assert outcome.a_faces == (6, 5, 5, 4, 2, 2, 1)
    assert outcome.b_faces == (5, 4, 4, 1)
    assert outcome.victor == "a"
    assert outcome.victor_name == "Roth"
    assert outcome.victory_level == 1
    assert [die.group for die in dice.dice] == ["a"] * 7 + ["b"] * 4


def test_victory_level_is_only_reported_with_the_optional_rule() -> None:
    contest = Contest(a=Contestant(dice_count=2), b=Contestant(dice_count=1))
    outcome = resolve_contest(contest, SuppliedDice({"a": [6, 5], "b": [1]}))
    assert outcome.victor == "a"
    assert outcome.victory_level is None


def test_dice_count_and_attribute_together_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as error:
        dice_count(Contestant(attribute=12, dice_count=4), "b")
    assert error.value.field == "b.dice_count"


def test_contestant_without_attribute_or_dice_count_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as error:
        dice_count(Contestant(talents=1), "a")
    assert error.value.field == "a.attribute"


def test_same_seed_same_contest_same_dice() -> None:
    contest = Contest(a=Contestant(attribute=16, talents=2), b=Contestant(attribute=12))
    first = SeededDice("replay me")
    second = SeededDice("replay me")
    assert resolve_contest(contest, first) == resolve_contest(contest, second)
    assert first.dice == second.dice


@given(hands, hands)
def test_swapping_sides_swaps_the_victor(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    forward, backward = compare_faces(a, b), compare_faces(b, a)
    swap = {"a": "b", "b": "a", None: None}
    assert backward.victor == swap[forward.victor]
    assert backward.victory_level == forward.victory_level
    assert backward.no_victor_reason == forward.no_victor_reason


@given(hands, hands)
def test_victory_level_counts_winner_dice_above_every_remaining_loser_die(
    a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    result = compare_faces(a, b)
    ties = len(result.discarded_ties)
    if result.victor is None:
        assert result.victory_level is None
        assert ties == min(len(a), len(b))
        return
    winner, loser = (a, b) if result.victor == "a" else (b, a)
    winner_rest = sorted(winner, reverse=True)[ties:]
    loser_rest = sorted(loser, reverse=True)[ties:]
    assert result.victory_level == sum(1 for w in winner_rest if all(w > x for x in loser_rest))
    assert 1 <= result.victory_level <= len(winner) - ties


@given(hands, hands)
def test_discarded_pairs_are_the_top_tied_pairs(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    result = compare_faces(a, b)
    ties = len(result.discarded_ties)
    assert tuple(sorted(a, reverse=True)[:ties]) == result.discarded_ties
    assert tuple(sorted(b, reverse=True)[:ties]) == result.discarded_ties


def test_an_attribute_below_three_rolls_only_its_talent_dice() -> None:
    # "The number of dice rolled is equal to the appropriate attribute divided by 3
    #  (round down). If a talent ... should obviously help ... you may roll one extra die."
    assert dice_count(Contestant(attribute=2, talents=1), "a") == 1
    assert dice_count(Contestant(attribute=2), "a") == 0


def test_a_side_with_no_dice_has_run_out_and_there_is_no_victor() -> None:
    # "If all dice are tied or if one person runs out of dice after the discard of all
    #  high ties, then the contest does not have a victor."
    contest = Contest(a=Contestant(attribute=2), b=Contestant(attribute=12))
    outcome = resolve_contest(contest, SuppliedDice({"a": [], "b": [6, 5, 2, 1]}))
    assert (outcome.a_dice, outcome.b_dice) == (0, 4)
    assert (outcome.victor, outcome.no_victor_reason) == (None, "ran_out_of_dice")
    odds = contest_odds(0, 4)
    assert (odds.ran_out_of_dice, odds.a_wins, odds.b_wins) == (1, 0, 0)
