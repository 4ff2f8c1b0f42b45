"""TFT contests (seed 004), sentence by sentence: each test quotes the sentence it checks
on the rules (``fairroll.rules.tft``) and the exact odds (``fairroll.odds.tft``); the
examples' own faces are checked with the words that give them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fairroll.odds.tft import contest_odds
from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules.tft import Contest, Contestant, compare_faces, dice_count, resolve_contest

hands = st.lists(st.integers(1, 6), min_size=1, max_size=10).map(tuple)


@given(st.integers(0, 20), st.integers(0, 20), st.text(min_size=1, max_size=8))
def test_participants_roll_six_sided_dice_and_more_is_better(
    a_attribute: int, b_attribute: int, seed: str
) -> None:
    """ "In a contest the participants will roll 6 sided dice; the more the better."
    Every die of a contest is a d6, and one more die never lowers a side's chance of
    winning. (It may raise the opponent's too: a side that would have run out of dice
    on a tie, a contest without a victor, fights on.)"""
    contest = Contest(a=Contestant(attribute=a_attribute), b=Contestant(attribute=b_attribute))
    dice = SeededDice(seed)
    outcome = resolve_contest(contest, dice)
    assert all(die.sides == 6 for die in dice.dice)
    assert all(1 <= face <= 6 for face in outcome.a_faces + outcome.b_faces)
    a, b = a_attribute // 3, b_attribute // 3
    now, more = contest_odds(a, b), contest_odds(a + 1, b)
    assert more.a_wins >= now.a_wins


@given(st.integers(0, 60), st.integers(0, 4))
def test_the_number_of_dice_is_based_on_the_attribute(attribute: int, talents: int) -> None:
    """ "The number of dice will be based on the character's attributes.": the attribute
    divided by 3, rounded down, plus a die per helpful talent; three more points of the
    attribute is one more die."""
    count = dice_count(Contestant(attribute=attribute, talents=talents), "a")
    assert count == attribute // 3 + talents
    if attribute <= 57:
        assert dice_count(Contestant(attribute=attribute + 3, talents=talents), "a") == count + 1


@given(hands, hands, st.data())
def test_high_rolls_are_good(a: tuple[int, ...], b: tuple[int, ...], data: st.DataObject) -> None:
    """ "Resolving Contests: Each player rolls their several dice with high rolls being
    good.": a side that wins still wins when one of its dice shows more."""
    if compare_faces(a, b).victor != "a":
        return
    index = data.draw(st.integers(0, len(a) - 1))
    higher = (*a[:index], min(6, a[index] + 1), *a[index + 1 :])
    assert compare_faces(higher, b).victor == "a"


@given(hands, hands)
def test_the_higher_highest_die_wins(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """ "If one player's highest die is higher than the highest die of the other player
    then they have won the contest." """
    result = compare_faces(a, b)
    if max(a) > max(b):
        assert result.victor == "a"
        assert result.discarded_ties == ()
        assert result.deciding == (max(a), max(b))
    elif max(b) > max(a):
        assert result.victor == "b"


@given(st.integers(1, 6), hands, hands)
def test_tied_highest_dice_are_discarded_and_the_next_compared(
    top: int, a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    """ "If the highest die on each side is tied they are discarded and the next highest
    dice are compared." "If they are tied they are likewise discarded.": a tied top
    pair changes nothing but the discards."""
    a = tuple(min(face, top) for face in a)
    b = tuple(min(face, top) for face in b)
    with_top, without = compare_faces((top, *a), (top, *b)), compare_faces(a, b)
    assert with_top.victor == without.victor
    assert with_top.deciding == without.deciding
    assert with_top.discarded_ties == (top, *without.discarded_ties)
    # Two tied pairs in a row, both discarded, then 5 against 2 decides.
    twice = compare_faces((6, 6, 5), (6, 6, 2, 1))
    assert (twice.victor, twice.discarded_ties, twice.deciding) == ("a", (6, 6), (5, 2))


def test_victory_levels_are_the_gms_option() -> None:
    """ "Optional Rule: If the GM wishes, the number of dice that are higher than any dice
    of the opponent can be an indication of the size of the victory.": the level is
    given only when the contest asks for it."""
    faces = {"a": [6, 5, 2], "b": [4, 1]}
    plain = Contest(a=Contestant(dice_count=3), b=Contestant(dice_count=2))
    optional = Contest(a=Contestant(dice_count=3), b=Contestant(dice_count=2), victory_levels=True)
    assert resolve_contest(plain, SuppliedDice(faces)).victory_level is None
    assert resolve_contest(optional, SuppliedDice(faces)).victory_level == 2


@given(hands, hands)
def test_each_die_higher_than_any_of_the_opponents_is_a_level(
    a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    """ "For each die that is higher than ANY of the opponents dice is (after discarding
    the high ties) one level of victory is gained." """
    result = compare_faces(a, b)
    if result.victor is None:
        return
    ties = len(result.discarded_ties)
    winner, loser = (a, b) if result.victor == "a" else (b, a)
    rest = sorted(loser, reverse=True)[ties:]
    above = [w for w in sorted(winner, reverse=True)[ties:] if all(w > x for x in rest)]
    assert result.victory_level == len(above) >= 1


def test_the_tied_example_rolls_as_written() -> None:
    """ "Example: Player A rolls 4 dice and gets 6, 4, 4 and a 3." "Player B rolls 5 dice
    and gets 6, 4, 4, 3 & 2.": a tie, B's extra 2 never compared."""
    contest = Contest(a=Contestant(dice_count=4), b=Contestant(dice_count=5), victory_levels=True)
    outcome = resolve_contest(contest, SuppliedDice({"a": [6, 4, 4, 3], "b": [6, 4, 4, 3, 2]}))
    assert (outcome.a_dice, outcome.b_dice) == (4, 5)
    assert outcome.victor is None
    assert outcome.discarded_ties == (6, 4, 4, 3)
    assert outcome.victory_level is None


def test_the_high_pair_example_rolls_as_written() -> None:
    """ "Example: Player A rolls 4 dice and gets a 6, 4, 3 and 1." "Player B rolls 3 dice
    and gets a 6, 1 & 1.": the 6s are discarded, A's 4 beats B's 1, and A's 4 and 3 are
    higher than any of B's remaining dice: a level 2 victory."""
    contest = Contest(a=Contestant(dice_count=4), b=Contestant(dice_count=3), victory_levels=True)
    outcome = resolve_contest(contest, SuppliedDice({"a": [6, 4, 3, 1], "b": [6, 1, 1]}))
    assert (outcome.a_dice, outcome.b_dice) == (4, 3)
    assert (outcome.victor, outcome.discarded_ties, outcome.deciding) == ("a", (6,), (4, 1))
    assert outcome.victory_level == 2
