"""Faster, Better, Cheaper characters and advancement (seed 000)."""

from __future__ import annotations

from typing import Any

import pytest

from fairroll.rules import RuleError
from fairroll.rules.fbc_characters import (
    AddAdjective,
    Advancement,
    ChangeStyle,
    Character,
    NewTrait,
    Options,
    RemoveNegative,
    Trait,
    advance,
    validate_character,
)

ANTHROPOLOGY = Trait(name="Anthropology", faster=1, better=1, style="Occult-flavored", best=True)
LYCANTHROPY = Trait(name="Lycanthropy", cheaper=1, style="Painful")
ROWING = Trait(name="Rowing", cheaper=1, style="Mechanical")


def billy(*traits: Trait, **options: Any) -> Character:
    return Character(
        name="Billy Talbot",
        traits=list(traits or (ANTHROPOLOGY, LYCANTHROPY, ROWING)),
        options=Options(**options),
    )


def rule_error(character: Character) -> RuleError:
    with pytest.raises(RuleError) as error:
        validate_character(character)
    return error.value


def test_billy_talbot_is_a_valid_sheet() -> None:
    report = validate_character(billy())
    assert report.budget is not None
    assert (report.budget.base, report.budget.spent) == (4, 4)
    assert report.optional_rules == ()


def test_sheet_comes_back_normalised() -> None:
    messy = billy(
        Trait(name="  Anthropology ", faster=1, better=1, style="Occult-flavored", best=True),
        LYCANTHROPY,
        Trait(name="Rowing", cheaper=1, style=" Mechanical  "),
    )
    traits = validate_character(messy).character.traits
    assert (traits[0].name, traits[2].style) == ("Anthropology", "Mechanical")


def test_unusual_lycanthropy_paid_back_by_a_negative_trait() -> None:
    # "Billy's Fighting is Slower, Expensive, and Panic-Stricken, giving him the extra
    #  adjective he can put in Lycanthropy"
    character = billy(
        ANTHROPOLOGY,
        Trait(name="Lycanthropy", cheaper=1, style="Painful", unusual=True),
        ROWING,
        Trait(name="Fighting", slower=1, expensive=1, style="Panic-Stricken", kind="negative"),
        unusual_traits=True,
        negative_traits=True,
    )
    report = validate_character(character)
    assert report.budget is not None
    assert (report.budget.base, report.budget.from_negatives, report.budget.spent) == (3, 1, 4)


def test_unusual_trait_may_end_with_only_a_style() -> None:
    # "Using this rule, Billy's Lycanthropy would be merely Painful."
    character = billy(
        ANTHROPOLOGY,
        Trait(name="Lycanthropy", style="Painful", unusual=True),
        ROWING,
        unusual_traits=True,
    )
    assert validate_character(character).budget.spent == 3  # type: ignore[union-attr]


def test_mixed_trait_needs_the_mixed_rule() -> None:
    # "Joe might be allowed to say Billy's Fighting is Faster, Worse, Expensive, and
    #  Panic-Stricken."
    fighting = Trait(
        name="Fighting", faster=1, worse=1, expensive=1, style="Panic-Stricken", kind="negative"
    )
    without = billy(ANTHROPOLOGY, LYCANTHROPY, ROWING, fighting, negative_traits=True)
    assert rule_error(without).field == "traits[3].worse"
    allowed = billy(
        ANTHROPOLOGY, LYCANTHROPY, ROWING, fighting, negative_traits=True, mixed_traits=True
    )
    assert validate_character(allowed).budget.spent == 5  # type: ignore[union-attr]


def test_worse_and_better_are_opposites() -> None:
    # "he couldn't have a Fighting Trait that is Worse and Better"
    fighting = Trait(name="Fighting", better=1, worse=2, style="Wild", kind="negative")
    error = rule_error(
        billy(ANTHROPOLOGY, LYCANTHROPY, ROWING, fighting, negative_traits=True, mixed_traits=True)
    )
    assert error.field == "traits[3].worse"
    assert "opposites" in str(error)


def test_never_all_three_on_one_trait() -> None:
    # "a character can never have all three of 'Faster, Better, Cheaper'"
    cooking = Trait(
        name="Cooking", faster=1, better=1, cheaper=1, style="Spicy", best=True, narrow=True
    )
    error = rule_error(billy(cooking, LYCANTHROPY, ROWING, narrow_traits=True))
    assert error.field == "traits[0].cheaper"
    assert "Cooking" in str(error)


def test_narrow_best_trait_may_take_another_better() -> None:
    # "if ... Cooking is already Faster and Better, the character cannot be Cheaper, but
    #  he can take another Better adjective."
    cooking = Trait(name="Cooking", faster=1, better=2, style="Spicy", best=True, narrow=True)
    report = validate_character(billy(cooking, LYCANTHROPY, ROWING, narrow_traits=True))
    assert report.budget.base == 5  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("traits", "options", "field", "words"),
    [
        ((ANTHROPOLOGY, LYCANTHROPY), {}, "traits", "exactly three"),
        (
            (ANTHROPOLOGY, LYCANTHROPY, Trait(name="Rowing", cheaper=2, style="Mechanical")),
            {},
            "traits",
            "picks 4",
        ),
        (
            (ANTHROPOLOGY, LYCANTHROPY, Trait(name="Rowing", style="Mechanical")),
            {},
            "traits[2].faster",
            "picks 1",
        ),
        (
            (ANTHROPOLOGY, LYCANTHROPY, Trait(name="Rowing", cheaper=1, style="Faster")),
            {},
            "traits[2].style",
            "style",
        ),
        (
            (ANTHROPOLOGY, LYCANTHROPY, Trait(name="anthropology", cheaper=1, style="Odd")),
            {},
            "traits[2].name",
            "named",
        ),
        (
            (
                ANTHROPOLOGY,
                Trait(name="Lycanthropy", cheaper=1, style="Painful", best=True),
                ROWING,
            ),
            {},
            "traits[1].best",
            "only one",
        ),
        (
            (ANTHROPOLOGY, LYCANTHROPY, ROWING, Trait(name="Fighting", slower=2, style="Meek")),
            {},
            "traits[3].slower",
            "negative Traits rule",
        ),
        (
            (
                ANTHROPOLOGY,
                LYCANTHROPY,
                ROWING,
                Trait(name="Fighting", slower=2, worse=2, style="Meek", kind="negative"),
            ),
            {"negative_traits": True, "negative_limit": 3},
            "traits[3].slower",
            "limit",
        ),
        (
            (ANTHROPOLOGY, LYCANTHROPY, Trait(name="Rowing", cheaper=2, style="Odd", narrow=True)),
            {},
            "traits[2].narrow",
            "narrow",
        ),
    ],
)
def test_every_breach_names_the_trait_field_and_rule(
    traits: tuple[Trait, ...], options: dict[str, Any], field: str, words: str
) -> None:
    error = rule_error(billy(*traits, **options))
    assert error.field == field
    assert words in str(error)


def test_negative_adjectives_buy_one_positive_per_two() -> None:
    fighting = Trait(name="Fighting", slower=1, worse=1, style="Meek", kind="negative")
    # Two negatives buy one more positive: four positives alone now fall one short.
    error = rule_error(billy(ANTHROPOLOGY, LYCANTHROPY, ROWING, fighting, negative_traits=True))
    assert "plus 1 for 2 negative adjectives" in str(error)


# --- advancement -------------------------------------------------------------------------


def buy(purchase: Any, xp: int = 10, character: Character | None = None) -> Any:
    return advance(Advancement(character=character or billy(), xp=xp, purchase=purchase))


def test_new_trait_costs_one_xp() -> None:
    # "For 1 XP, the character can learn a new Trait, with one ... adjective and one style"
    outcome = buy(NewTrait(name="Cooking", adjective="better", style="Spicy"), xp=1)
    assert (outcome.cost, outcome.xp_left) == (1, 0)
    cooking = outcome.character.traits[-1]
    assert (cooking.name, cooking.better, cooking.kind) == ("Cooking", 1, "learned")
    assert outcome.character.stage == "advanced"


def test_another_adjective_costs_the_traits_adjectives_including_style() -> None:
    # Anthropology is Faster, Better and Occult-flavored: 3 adjectives, 3 XP.
    outcome = buy(AddAdjective(trait="Anthropology", adjective="faster"), xp=3)
    assert outcome.cost == 3
    assert outcome.character.traits[0].faster == 2


def test_the_third_of_faster_better_cheaper_can_never_be_bought() -> None:
    # "if a character is already Faster and Better, he can take another Faster or Better,
    #  but he can never be Cheaper."
    with pytest.raises(RuleError) as error:
        buy(AddAdjective(trait="Anthropology", adjective="cheaper"))
    assert error.value.field == "purchase.adjective"


def test_removing_a_negative_costs_the_number_of_negatives() -> None:
    character = billy(
        ANTHROPOLOGY,
        LYCANTHROPY,
        ROWING,
        Trait(name="Fighting", slower=1, expensive=1, style="Panic-Stricken", kind="negative"),
        negative_traits=True,
    )
    sheet = Character(name=character.name, traits=character.traits, options=character.options)
    outcome = buy(RemoveNegative(trait="Fighting", adjective="slower"), xp=2, character=sheet)
    assert outcome.cost == 2
    assert outcome.character.traits[3].slower == 0


def test_negatives_count_as_adjectives_and_bought_ones_cannot_contradict_them() -> None:
    # "negative adjectives do count as adjectives for the purposes of being a new
    #  'Faster, Better, Cheaper' -- and any positive adjective bought cannot contradict"
    character = billy(
        ANTHROPOLOGY,
        LYCANTHROPY,
        ROWING,
        Trait(name="Fighting", slower=1, expensive=1, style="Panic-Stricken", kind="negative"),
        negative_traits=True,
    )
    outcome = buy(AddAdjective(trait="Fighting", adjective="better"), xp=3, character=character)
    assert outcome.cost == 3  # Slower, Expensive, Panic-Stricken
    with pytest.raises(RuleError) as error:
        buy(AddAdjective(trait="Fighting", adjective="faster"), character=character)
    assert "contradict" in str(error.value)


def test_changing_a_style_is_free() -> None:
    outcome = buy(ChangeStyle(trait="rowing", style="Graceful"), xp=0)
    assert (outcome.cost, outcome.character.traits[2].style) == (0, "Graceful")


def test_short_of_xp_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as error:
        buy(AddAdjective(trait="Rowing", adjective="better"), xp=1)
    assert error.value.field == "xp"
    assert "costs 2 XP" in str(error.value)


def test_unknown_trait_is_a_rule_error() -> None:
    with pytest.raises(RuleError) as error:
        buy(AddAdjective(trait="Juggling", adjective="better"))
    assert error.value.field == "purchase.trait"
