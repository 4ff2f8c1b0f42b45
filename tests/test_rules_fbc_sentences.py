"""Faster, Better, Cheaper (seed 000), sentence by sentence: each test quotes the sentences
it checks on the rules (``fairroll.rules.fbc`` for rolls and conflicts,
``fairroll.rules.fbc_characters`` for sheets and advances); where a sentence states an
invariant, hypothesis draws the rolls."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules import RuleError
from fairroll.rules.fbc import (
    Conflict,
    Participant,
    Roll,
    check_risk,
    resolve_conflict,
    resolve_roll,
    score_roll,
)
from fairroll.rules.fbc_characters import (
    AddAdjective,
    Advancement,
    Character,
    Options,
    RemoveNegative,
    Trait,
    advance,
    validate_character,
)

faces = st.lists(st.integers(1, 6), min_size=1, max_size=12).map(tuple)

BEST = Trait(name="Anthropology", faster=1, better=1, style="Occult-flavored", best=True)
LYCANTHROPY = Trait(name="Lycanthropy", cheaper=1, style="Painful")
ROWING = Trait(name="Rowing", cheaper=1, style="Mechanical")


def sheet(*traits: Trait, **options: Any) -> Character:
    return Character(
        name="Billy Talbot",
        traits=list(traits or (BEST, LYCANTHROPY, ROWING)),
        options=Options(**options),
    )


def refused(character: Character) -> RuleError:
    with pytest.raises(RuleError) as error:
        validate_character(character)
    return error.value


def plain(faces: tuple[int, ...], **fields: Any) -> Any:
    """A roll of ``faces`` risking all of them from a pool of ten more."""
    return score_roll(Roll(pool=len(faces) + 10, risk=len(faces), **fields), faces, ())


# --- character creation ------------------------------------------------------------------


def test_every_character_starts_with_three_traits() -> None:
    """ "Every character starts out with three Traits, representing three things the
    character is good at.": two or four starting Traits are refused."""
    assert validate_character(sheet()).budget is not None
    assert "exactly three" in str(refused(sheet(BEST, LYCANTHROPY)))
    fourth = Trait(name="Cooking", better=1, style="Spicy")
    assert "exactly three" in str(refused(sheet(BEST, LYCANTHROPY, ROWING, fourth)))


@pytest.mark.parametrize(
    "name", ["Psychic Football Prediction", "Kabbalistic Spellcasting", "Cooking", "Looks"]
)
def test_a_trait_can_be_anything_broad_or_narrow_one_word_or_more(name: str) -> None:
    """ "These Traits can be anything, so long as the GM approves." "They can be as broad
    or narrow as the GM will allow." "A Trait does not have to be a single word, but
    most are.": any name of one word or several is a Trait (the GM's approval is the
    table's, not the service's)."""
    trait = Trait(name=name, cheaper=1, style="Odd")
    report = validate_character(sheet(BEST, LYCANTHROPY, trait))
    assert report.character.traits[2].name == name


def test_the_best_trait_picks_two_adjectives_the_same_twice_allowed() -> None:
    """ "For one Trait (the thing the character is best at), the character picks two of
    the following adjectives: Faster, Better, Cheaper." "It's okay to pick the same
    adjective twice." """
    twice = Trait(name="Anthropology", better=2, style="Occult-flavored", best=True)
    assert validate_character(sheet(twice, LYCANTHROPY, ROWING)).budget.spent == 4  # type: ignore[union-attr]
    one = Trait(name="Anthropology", better=1, style="Occult-flavored", best=True)
    assert refused(sheet(one, LYCANTHROPY, ROWING)).field == "traits[0].faster"
    unmarked = Trait(name="Anthropology", faster=1, better=1, style="Occult-flavored")
    assert "best" in str(refused(sheet(unmarked, LYCANTHROPY, ROWING)))


def test_the_other_traits_pick_one_of_faster_better_cheaper() -> None:
    """ "For all the other Traits, pick one of Faster, Better, or Cheaper.": none is
    refused, two are one too many."""
    bare = Trait(name="Rowing", style="Mechanical")
    assert refused(sheet(BEST, LYCANTHROPY, bare)).field == "traits[2].faster"
    two = Trait(name="Rowing", cheaper=1, faster=1, style="Mechanical")
    assert "picks 4" in str(refused(sheet(BEST, LYCANTHROPY, two)))


@pytest.mark.parametrize("style", ["Faster", "better", "CHEAPER", "Slower"])
def test_each_trait_has_a_style_adjective_other_than_faster_better_cheaper(style: str) -> None:
    """ "Also, for each Trait, choose a "style" adjective, representing the way the
    character expresses the trait." "This can be any adjective other than Faster,
    Better, or Cheaper.": a Trait without a style is not a Trait, and one of the three
    (or their opposites) is refused as a style."""
    with pytest.raises(msgspec.ValidationError, match="style"):
        msgspec.convert({"name": "Rowing", "cheaper": 1}, Trait)
    trait = Trait(name="Rowing", cheaper=1, style=style)
    assert refused(sheet(BEST, LYCANTHROPY, trait)).field == "traits[2].style"
    fine = Trait(name="Rowing", cheaper=1, style="Faster-than-light")
    assert validate_character(sheet(BEST, LYCANTHROPY, fine)).character.traits[2].style


@given(faces)
def test_without_a_trait_a_character_is_average(rolled: tuple[int, ...]) -> None:
    """ "Anything the character has no Trait for, he is average in.": a roll with no
    adjective is the plain rule: a success on 3 or more, a die lost on less, a die
    gained on each 6."""
    outcome = plain(rolled)
    assert outcome.successes == sum(face >= 3 for face in rolled)
    assert all(die.modified == die.raw for die in outcome.dice)
    lost, sixes = sum(face < 3 for face in rolled), rolled.count(6)
    assert outcome.new_pool == len(rolled) + 10 - lost + sixes


def test_billy_talbots_traits_as_written() -> None:
    """ "Billy Talbot's Traits Anthropology is Faster, Better, and Occult-flavored."
    "Lycanthropy is Cheaper and Painful." "Rowing is Cheaper and Mechanical.": a valid
    new character, four adjectives for three Traits."""
    report = validate_character(sheet())
    assert report.budget is not None and (report.budget.base, report.budget.spent) == (4, 4)
    lycanthropy, rowing = report.character.traits[1:]
    assert (lycanthropy.cheaper, lycanthropy.style) == (1, "Painful")
    assert (rowing.cheaper, rowing.style) == (1, "Mechanical")


def test_a_narrow_trait_may_take_an_extra_adjective() -> None:
    """ "The GM may feel it is unfair or inconsistent that highly narrow traits are treated
    the same as broad traits." "In that case, the GM may allow a character who takes a
    narrow Trait of limited use, like Cooking, to take an extra "Faster, Better, Cheaper"
    adjective.": with the option, and only then."""
    cooking = Trait(name="Cooking", better=2, style="Spicy", narrow=True)
    report = validate_character(sheet(BEST, LYCANTHROPY, cooking, narrow_traits=True))
    assert report.budget.base == 5  # type: ignore[union-attr]
    assert "narrow" in str(refused(sheet(BEST, LYCANTHROPY, cooking)))
    short = Trait(name="Cooking", better=1, style="Spicy", narrow=True)
    assert "picks 2" in str(refused(sheet(BEST, LYCANTHROPY, short, narrow_traits=True)))


def test_an_unusual_trait_gets_one_less_adjective_maybe_only_a_style() -> None:
    """ "Similarly, the GM may feel it is inconsistent or unfair that Traits that imply
    abilities average characters can't perform at all, like Lycanthropy, are treated the
    same as other Traits." "In that case, such Traits get one less "Faster, better,
    Cheaper" adjective." "This might mean the Trait ends up with only a "style"
    adjective." """
    merely = Trait(name="Lycanthropy", style="Painful", unusual=True)
    report = validate_character(sheet(BEST, merely, ROWING, unusual_traits=True))
    assert report.budget.base == 3  # type: ignore[union-attr]
    still = Trait(name="Lycanthropy", cheaper=1, style="Painful", unusual=True)
    assert "picks 3" in str(refused(sheet(BEST, still, ROWING, unusual_traits=True)))
    assert "unusual" in str(refused(sheet(BEST, merely, ROWING)))


def test_negative_traits_are_an_option_with_a_gms_limit_and_a_style() -> None:
    """ "Also, GMs who like Advantage/Disadvantage systems might enjoy the concept of
    Negative Traits." "A Negative Trait is a Trait the character is bad at." "For a
    Negative Trait, the player chooses any number of the following adjectives any number
    of times, up to a limit set by the GM: Slower, Worse, Expensive." "The player also
    chooses a "style" adjective for the negative Trait." """
    fighting = Trait(name="Fighting", worse=2, style="Panic-Stricken", kind="negative")
    extra = Trait(name="Rowing", cheaper=2, style="Mechanical")
    with_rule = sheet(BEST, LYCANTHROPY, extra, fighting, negative_traits=True, negative_limit=2)
    assert validate_character(with_rule).optional_rules == ("negative_traits",)
    assert "negative" in str(refused(sheet(BEST, LYCANTHROPY, extra, fighting)))
    over = sheet(BEST, LYCANTHROPY, extra, fighting, negative_traits=True, negative_limit=1)
    assert "limit of 1" in str(refused(over))
    none = Trait(name="Fighting", style="Panic-Stricken", kind="negative")
    assert "at least one" in str(
        refused(sheet(BEST, LYCANTHROPY, ROWING, none, negative_traits=True))
    )
    with pytest.raises(msgspec.ValidationError, match="style"):
        msgspec.convert({"name": "Fighting", "worse": 1, "kind": "negative"}, Trait)


@pytest.mark.parametrize(("negatives", "bonus"), [(1, 0), (2, 1), (3, 1), (4, 2), (5, 2)])
def test_every_two_negative_adjectives_buy_a_positive_elsewhere(negatives: int, bonus: int) -> None:
    """ "For every two "Slower, Worse, Expensive" adjectives the character has, the player
    gets another "Faster, Better, Cheaper" he can put elsewhere." """
    fighting = Trait(name="Fighting", worse=negatives, style="Meek", kind="negative")
    rowing = Trait(name="Rowing", cheaper=1 + bonus, style="Mechanical")
    report = validate_character(
        sheet(BEST, LYCANTHROPY, rowing, fighting, negative_traits=True, negative_limit=5)
    )
    assert report.budget is not None
    assert (report.budget.from_negatives, report.budget.spent) == (bonus, 4 + bonus)


def test_mixed_traits_need_the_option_and_no_opposites() -> None:
    """ "Really odd GMs might allow Traits to have both positive and negative adjectives,
    so long as they don't conflict." """
    fighting = Trait(
        name="Fighting", faster=1, worse=1, expensive=1, style="Panic-Stricken", kind="negative"
    )
    mixed = sheet(BEST, LYCANTHROPY, ROWING, fighting, negative_traits=True, mixed_traits=True)
    assert "mixed_traits" in validate_character(mixed).optional_rules
    unmixed = sheet(BEST, LYCANTHROPY, ROWING, fighting, negative_traits=True)
    assert "mixed Traits rule" in str(refused(unmixed))
    clash = Trait(name="Fighting", better=1, worse=2, style="Wild", kind="negative")
    opposed = sheet(BEST, LYCANTHROPY, ROWING, clash, negative_traits=True, mixed_traits=True)
    assert "opposites" in str(refused(opposed))


# --- rolls -------------------------------------------------------------------------------


@given(st.integers(1, 30), st.integers(0, 20), st.text(max_size=6))
def test_a_pool_of_six_sided_dice_set_by_the_gm_risked_as_the_player_decides(
    risk: int, more: int, seed: str
) -> None:
    """ "Every character has a pool of ordinary (six-sided) dice set by the GM." "When it
    is time to roll dice, the player decides how much of his current pool to risk." "He
    then rolls that many dice, up to the number of dice currently in his pool.": the
    pool is the request's, the dice rolled are the risked d6s, and risking more than the
    pool is refused."""
    dice = SeededDice(seed)
    outcome = resolve_roll(Roll(pool=risk + more, risk=risk), dice)
    assert outcome.pool_before == risk + more
    assert [(die.group, die.sides) for die in dice.dice] == [("risk", 6)] * risk
    assert len(outcome.dice) == risk
    with pytest.raises(RuleError, match="cannot risk"):
        check_risk(Roll(pool=risk, risk=risk + 1) if risk < 30 else Roll(pool=1, risk=2))


@given(faces)
def test_the_target_is_three_and_each_die_meeting_it_is_a_success(
    rolled: tuple[int, ...],
) -> None:
    """ "The target number is equal to 3." "Every die that meets or beats the target
    number is a Success." "The more Successes, the better the character did." "That base
    target number is what you're aiming for for an average task.": each success is one
    fact to narrate."""
    assert Roll(pool=5, risk=1).target == 3
    outcome = plain(rolled)
    assert [die.success for die in outcome.dice] == [face >= 3 for face in rolled]
    assert outcome.facts == outcome.successes


@given(faces, st.integers(1, 11))
def test_the_gm_may_move_the_target_and_higher_is_harder(
    rolled: tuple[int, ...], target: int
) -> None:
    """ "The GM can modify the target number up or down depending on how hard or easy what
    the character is attempting is." "Higher is harder." "Generally, there are no opposed
    rolls in Faster, Better, Cheaper, so if the character is facing tough opposition, the
    GM should increase the target number.": a roll names its target, and one more never
    gives more successes."""
    easier, harder = plain(rolled, target=target), plain(rolled, target=target + 1)
    assert (easier.target, harder.target) == (target, target + 1)
    assert harder.successes <= easier.successes
    assert easier.successes == sum(face >= target for face in rolled)


def test_the_pit_climb_as_written() -> None:
    """ "He currently has 10 dice in his pool, The GM, noting the walls of the pit are
    pretty rough, declares the target number to be average: 3." Joe risks 5 and rolls
    2 1 1 4 5: two successes, three failures, a pool of 7."""
    outcome = resolve_roll(Roll(pool=10, risk=5), SuppliedDice({"risk": [2, 1, 1, 4, 5]}))
    assert (outcome.pool_before, outcome.target) == (10, 3)
    assert (outcome.successes, outcome.new_pool) == (2, 7)


@given(faces)
def test_each_die_that_is_not_a_success_depletes_the_pool(rolled: tuple[int, ...]) -> None:
    """ "For each die that is not a Success, the character's Pool is depleted by one." """
    outcome = plain(rolled)
    failed = sum(not die.success for die in outcome.dice)
    assert {c.cause: c.change for c in outcome.pool_changes}.get("failed_dice", 0) == -failed


@given(faces, st.integers(0, 30))
def test_extra_successes_may_increase_the_pool_instead(
    rolled: tuple[int, ...], convert: int
) -> None:
    """ "The player can also choose not to use his extra Successes for narration, but to
    increase his pool of dice.": each converted success is a die more and a fact less,
    one success always staying a fact."""
    kept, turned = plain(rolled), plain(rolled, convert=convert)
    assert turned.converted == min(convert, max(kept.successes - 1, 0))
    assert turned.new_pool == kept.new_pool + turned.converted
    assert turned.facts == kept.facts - turned.converted


# --- conflicts ---------------------------------------------------------------------------


def example_conflict() -> tuple[Conflict, SuppliedDice]:
    conflict = Conflict(
        participants=[
            Participant(name="Joe", pool=5, risk=5, faster=1, narrate="first"),
            Participant(name="Sue", pool=5, risk=5, convert=1, narrate="first"),
            Participant(name="Fred", pool=5, risk=5, narrate="last"),
        ]
    )
    dice = SuppliedDice(
        {"p1.risk": [2, 1, 5, 1, 6], "p2.risk": [1, 2, 2, 3, 5], "p3.risk": [3, 2, 1, 4, 5]}
    )
    return conflict, dice


def test_the_three_way_conflict_as_written() -> None:
    """ "Each player has 5 dice in their pool, and they all secretly decide to roll 5
    dice." "John rolls 2 1 5 1 6." "Fred rolls 3 2 1 4 5." "Sue rolls 1 2 2 3 5." "For
    the sake of the example, let's say Billy's "Beat People Up" Trait is Faster, and the
    other two characters have no Traits that are Faster." "Sue decides to turn her second
    Success into a bonus for her pool, and passes." (The first roll, John's in the text,
    is Joe's: "Joe has 3 dice (because of the 6 he rolled)".)"""
    conflict, dice = example_conflict()
    outcome = resolve_conflict(conflict, dice)
    dice.check_all_used()
    joe, sue, fred = outcome.participants
    assert [p.roll.pool_before for p in outcome.participants] == [5, 5, 5]
    assert [len(p.roll.dice) for p in outcome.participants] == [5, 5, 5]
    assert (joe.roll.successes, sue.roll.successes, fred.roll.successes) == (2, 2, 3)
    assert (joe.speed, sue.speed, fred.speed) == (1, 0, 0)
    assert (sue.roll.facts, sue.roll.converted) == (1, 1)
    sues = [t.action for t in outcome.turns if t.participant == "Sue"]
    assert sues == ["fact", "pass"]


@given(st.text(max_size=6), st.lists(st.integers(0, 2), min_size=2, max_size=5))
def test_conflicts_roll_at_three_and_take_turns_until_out_of_successes(
    seed: str, betters: list[int]
) -> None:
    """ "If PCs are in conflict, all make rolls simultaneously (each secretly deciding how
    many dice to roll beforehand) at the average target number of 3, and take turns
    narrating facts, until all are done narrating facts or out of Successes." "One can
    "pass" on one's turn to narrate, but only if one has narrated at least one fact
    already, and only if one plans to turn that Success into a bonus for the pool rather
    than a fact." "Once one is out of Successses, one doesn't get any more turns to
    narrate, obviously." """
    conflict = Conflict(
        participants=[
            Participant(name=f"P{i}", pool=6, risk=2 + i, better=b, convert=i % 3)
            for i, b in enumerate(betters)
        ]
    )
    outcome = resolve_conflict(conflict, SeededDice(seed))
    for participant, asked in zip(outcome.participants, conflict.participants, strict=True):
        assert participant.roll.target == 3
        assert len(participant.roll.dice) == asked.risk
        actions = [t.action for t in outcome.turns if t.participant == participant.name]
        assert len(actions) == participant.roll.successes
        assert actions.count("pass") == participant.roll.converted
        assert actions == ["fact"] * participant.roll.facts + ["pass"] * participant.roll.converted
    # Turns go round in narration order: nobody takes two in a row while another has one.
    order = outcome.narration_order
    left = {p.name: p.roll.successes for p in outcome.participants}
    position = 0
    for turn in outcome.turns:
        while not left[order[position % len(order)]]:
            position += 1
        assert turn.participant == order[position % len(order)]
        left[turn.participant] -= 1
        position += 1


@given(st.text(max_size=6), st.lists(st.integers(0, 2), min_size=2, max_size=6), st.data())
def test_the_faster_then_the_more_successful_choose_first_or_last(
    seed: str, speeds: list[int], data: st.DataObject
) -> None:
    """ "The player whose character is Faster chooses whether to narrate first or last, or
    if both characters are equally Fast, whoever has the most Successes gets to choose who
    goes first, or in the case of a tie, randomly determine who decides." "If there are
    more than two participants, the person who narrates the second fact is determined the
    same way, and so on, until an order is determined, tho they cannot trump the
    previously-decided order." """
    choices = data.draw(
        st.lists(st.sampled_from(["first", "last"]), min_size=len(speeds), max_size=len(speeds))
    )
    conflict = Conflict(
        participants=[
            Participant(name=f"P{i}", pool=6, risk=3, faster=s, narrate=c)  # type: ignore[arg-type]
            for i, (s, c) in enumerate(zip(speeds, choices, strict=True))
        ]
    )
    outcome = resolve_conflict(conflict, SeededDice(seed))
    by_name = {p.name: p for p in outcome.participants}
    ranks = [(by_name[n].speed, by_name[n].roll.successes) for n in outcome.choosing_order]
    assert ranks == sorted(ranks, reverse=True)
    # A die decides among each k tied, k - 1 times (the last left takes the next place).
    assert len(outcome.tiebreaks) == sum(ranks.count(k) - 1 for k in set(ranks))
    # Each chooser takes the earliest (or latest) place the earlier choosers left free.
    free = list(range(len(speeds)))
    places = {}
    for name in outcome.choosing_order:
        places[name] = free.pop(0 if by_name[name].narrate == "first" else -1)
    assert list(outcome.narration_order) == sorted(places, key=places.__getitem__)


# --- the adjectives on a roll ------------------------------------------------------------


@given(faces)
def test_each_adjective_has_an_effect_on_the_roll(rolled: tuple[int, ...]) -> None:
    """ "Well, there is an effect for each of Faster, Better, and Cheaper on the die roll
    or the task itself if the character has a Trait relevant to the task at hand." "If a
    character is Faster, well, he just performs the the task faster than normal, or gets
    to go first, whichever seems more appropriate -- see also above.": Faster adds a die
    more on each 6 (and chooses first in a conflict, tested above), Better adds to each
    die, Cheaper keeps a failed die."""
    base = plain(rolled)
    faster, better, cheaper = (plain(rolled, **{a: 1}) for a in ("faster", "better", "cheaper"))
    assert faster.new_pool == base.new_pool + rolled.count(6)
    assert [d.modified for d in better.dice] == [face + 1 for face in rolled]
    assert cheaper.new_pool == base.new_pool + (1 if any(f < 3 for f in rolled) else 0)


@given(faces, st.integers(1, 4))
def test_better_adds_to_each_die_but_the_raw_face_decides_the_loss(
    rolled: tuple[int, ...], better: int
) -> None:
    """ "If the character is Better at the task in question, add one to each die roll,
    which should result in more Successes." "However, the raw, unmodified die roll is
    used to determine if the die is lost from the pool." "A character with Better twice
    gets to add two to each die." """
    base, outcome = plain(rolled), plain(rolled, better=better)
    assert [d.success for d in outcome.dice] == [face + better >= 3 for face in rolled]
    assert outcome.successes >= base.successes
    assert [d.fate for d in outcome.dice] == [d.fate for d in base.dice]
    assert outcome.new_pool == base.new_pool


@given(faces, st.integers(1, 6))
def test_cheaper_keeps_that_many_failed_dice_each_roll(
    rolled: tuple[int, ...], cheaper: int
) -> None:
    """ "If you're Cheaper, that means you get to keep one failed die out of each roll."
    "If you have one of "Faster, Better, Cheaper" multiple times, then the effects
    stack." "A character with Cheaper twice gets to keep two failed dice in his pool." """
    failed = sum(face < 3 for face in rolled)
    outcome = plain(rolled, cheaper=cheaper)
    assert outcome.new_pool == plain(rolled).new_pool + min(cheaper, failed)
    assert sum(d.fate == "kept_by_cheaper" for d in outcome.dice) == min(cheaper, failed)


@given(faces, st.integers(1, 3))
def test_negative_adjectives_have_the_opposite_effect(rolled: tuple[int, ...], level: int) -> None:
    """ "If the GM is using the optional negative adjectives, the negative adjectives have
    the opposite game effect to the positive ones.": Worse takes what Better adds, from
    the successes only; Expensive loses successful dice where Cheaper keeps failed ones;
    Slower gains a die on a 6 only on its chance die, where Faster gains more."""
    base = plain(rolled)
    worse = plain(rolled, worse=level)
    assert [d.modified for d in worse.dice] == [face - level for face in rolled]
    assert worse.new_pool == base.new_pool
    expensive = plain(rolled, expensive=level)
    lost = min(level, sum(face >= 3 for face in rolled))
    assert expensive.new_pool == max(1, base.new_pool - lost)
    sixes = rolled.count(6)
    chance = (1,) * sixes
    slower = score_roll(Roll(pool=len(rolled) + 10, risk=len(rolled), slower=level), rolled, chance)
    assert slower.new_pool == base.new_pool  # a chance die of 1 gives the die back
    unlucky = score_roll(
        Roll(pool=len(rolled) + 10, risk=len(rolled), slower=level), rolled, (6,) * sixes
    )
    assert unlucky.new_pool == base.new_pool - sixes


# --- advancement -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trait", "cost"),
    [
        ("Anthropology", 3),  # Faster, Better, Occult-flavored
        ("Rowing", 2),  # Cheaper, Mechanical
    ],
)
def test_another_adjective_costs_the_number_of_adjectives_style_included(
    trait: str, cost: int
) -> None:
    """ "For a number of XP equal to the number of adjectives in a Trait (including the
    "style" adjective), the player can add another of the "Faster, Better, Cheaper"
    adjectives to a trait." """
    bought = advance(
        Advancement(
            character=sheet(), xp=cost, purchase=AddAdjective(trait=trait, adjective="better")
        )
    )
    assert (bought.cost, bought.xp_left) == (cost, 0)
    with pytest.raises(RuleError, match=f"costs {cost} XP"):
        advance(
            Advancement(
                character=sheet(),
                xp=cost - 1,
                purchase=AddAdjective(trait=trait, adjective="better"),
            )
        )


@pytest.mark.parametrize(
    ("negatives", "cost"), [({"slower": 1}, 1), ({"slower": 2, "worse": 1}, 3)]
)
def test_removing_a_negative_adjective_costs_the_traits_negatives(
    negatives: dict[str, Any], cost: int
) -> None:
    """ "If the GM is using negative adjectives, by spending a number of XP equal to the
    number of negative adjectives in a Trait, one negative adjective can be removed." """
    fighting = Trait(name="Fighting", style="Meek", kind="negative", **negatives)
    rowing = Trait(name="Rowing", cheaper=1 + cost // 2, style="Mechanical")
    character = sheet(BEST, LYCANTHROPY, rowing, fighting, negative_traits=True)
    bought = advance(
        Advancement(
            character=character,
            xp=cost,
            purchase=RemoveNegative(trait="Fighting", adjective="slower"),
        )
    )
    assert bought.cost == cost
    left = [t for t in bought.character.traits if t.name == "Fighting"]
    if negatives == {"slower": 1}:
        assert left == []  # nothing negative left: the character is average at it
    else:
        assert (left[0].slower, left[0].worse) == (1, 1)
