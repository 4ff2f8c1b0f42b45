"""Faster, Better, Cheaper characters: creating a sheet, and buying advances with XP.

A new character has three Traits: the best with two of Faster/Better/Cheaper,
the others one each, and a style adjective apiece; never all three of
Faster, Better and Cheaper on one Trait. Optional rules add an adjective to
narrow Traits, take one from unusual ones, allow negative Traits
(Slower/Worse/Expensive, every two buying one more positive adjective) and
Traits mixing positive and negative adjectives that are not opposites.

>>> billy = Character(name="Billy Talbot", traits=[
...     Trait(name="Anthropology", faster=1, better=1, style="Occult-flavored", best=True),
...     Trait(name="Lycanthropy", cheaper=1, style="Painful"),
...     Trait(name="Rowing", cheaper=1, style="Mechanical")])
>>> validate_character(billy).budget.spent
4
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from fairroll.rules.errors import RuleError
from fairroll.rules.vocabulary import OPPOSITES, Name, tidy

__all__ = [
    "AddAdjective",
    "Advancement",
    "AdvancementOutcome",
    "Budget",
    "ChangeStyle",
    "Character",
    "CharacterReport",
    "NewTrait",
    "Options",
    "Purchase",
    "RemoveNegative",
    "Trait",
    "advance",
    "validate_character",
]

PositiveAdjective = Literal["faster", "better", "cheaper"]
NegativeAdjective = Literal["slower", "worse", "expensive"]
TraitKind = Literal["starting", "negative", "learned"]
Stage = Literal["creation", "advanced"]

Style = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=40,
        description="Any adjective but Faster, Better, Cheaper and their opposites.",
    ),
]
Count = Annotated[int, msgspec.Meta(ge=0, le=12)]

POSITIVE: tuple[PositiveAdjective, ...] = ("faster", "better", "cheaper")
NEGATIVE: tuple[NegativeAdjective, ...] = ("slower", "worse", "expensive")
#: Each adjective's opposite, both ways.
OPPOSITE: dict[str, str] = {**dict(OPPOSITES), **{n: p for p, n in OPPOSITES}}


class Trait(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A Trait with its adjective counts (repeats allowed) and style.

    ``kind``: one of the three ``starting`` Traits, a ``negative`` Trait (optional
    rule), or a Trait ``learned`` later with XP. ``best`` marks the starting
    Trait with two adjectives; ``narrow`` and ``unusual`` apply the optional rules.
    """

    name: Name
    style: Style
    faster: Count = 0
    better: Count = 0
    cheaper: Count = 0
    slower: Count = 0
    worse: Count = 0
    expensive: Count = 0
    kind: TraitKind = "starting"
    best: bool = False
    narrow: bool = False
    unusual: bool = False

    @property
    def positives(self) -> int:
        return self.faster + self.better + self.cheaper

    @property
    def negatives(self) -> int:
        return self.slower + self.worse + self.expensive


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The optional rules the GM uses ("Complications")."""

    narrow_traits: bool = False
    unusual_traits: bool = False
    negative_traits: bool = False
    negative_limit: Annotated[
        int,
        msgspec.Meta(ge=1, le=12, description="The GM's limit of negative adjectives a Trait."),
    ] = 3
    mixed_traits: bool = False


class Character(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A character sheet. ``stage``: ``creation`` checks the starting budget too."""

    name: Name
    traits: Annotated[list[Trait], msgspec.Meta(min_length=1, max_length=30)]
    options: Options = msgspec.field(default_factory=Options)
    stage: Stage = "creation"


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """Positive adjectives a new character may pick, and how many the sheet has."""

    base: int
    from_negatives: int
    spent: int


class CharacterReport(msgspec.Struct, frozen=True, kw_only=True):
    character: Character
    optional_rules: tuple[str, ...]
    budget: Budget | None


def validate_character(character: Character) -> CharacterReport:
    """Check every rule of the sheet; return it normalised (names and styles trimmed)."""
    character = _normalised(character)
    options = character.options
    seen: dict[str, int] = {}
    for index, trait in enumerate(character.traits):
        _check_trait(trait, index, options, character.stage)
        key = trait.name.casefold()
        if key in seen:
            raise RuleError(f"two Traits are named {trait.name!r}", field=f"traits[{index}].name")
        seen[key] = index
    bests = [i for i, t in enumerate(character.traits) if t.best]
    if len(bests) > 1:
        raise RuleError(
            "only one Trait is the one the character is best at",
            field=f"traits[{bests[1]}].best",
        )
    budget = _check_budget(character) if character.stage == "creation" else None
    rules = tuple(
        name
        for name in ("narrow_traits", "unusual_traits", "negative_traits", "mixed_traits")
        if getattr(options, name)
    )
    return CharacterReport(character=character, optional_rules=rules, budget=budget)


def _check_trait(trait: Trait, index: int, options: Options, stage: Stage) -> None:
    at = f"traits[{index}]"
    name = trait.name
    if trait.style.casefold() in OPPOSITE:
        raise RuleError(
            f"{name}: the style adjective must be something other than "
            "Faster, Better, Cheaper, Slower, Worse or Expensive",
            field=f"{at}.style",
        )
    if trait.faster and trait.better and trait.cheaper:
        raise RuleError(
            f"{name}: a Trait can never have all three of Faster, Better and Cheaper",
            field=f"{at}.cheaper",
        )
    for positive in POSITIVE:
        negative = OPPOSITE[positive]
        if getattr(trait, positive) and getattr(trait, negative):
            raise RuleError(
                f"{name}: {positive.capitalize()} and {negative.capitalize()} are opposites",
                field=f"{at}.{negative}",
            )
    if trait.negatives and not options.negative_traits:
        raise RuleError(
            f"{name}: Slower, Worse and Expensive need the negative Traits rule "
            "(options.negative_traits)",
            field=f"{at}.{_first_negative(trait)}",
        )
    if trait.negatives > options.negative_limit:
        raise RuleError(
            f"{name}: {trait.negatives} negative adjectives, over the GM's limit of "
            f"{options.negative_limit}",
            field=f"{at}.{_first_negative(trait)}",
        )
    if trait.narrow and not options.narrow_traits:
        raise RuleError(
            f"{name}: narrow Traits need the optional rule (options.narrow_traits)",
            field=f"{at}.narrow",
        )
    if trait.unusual and not options.unusual_traits:
        raise RuleError(
            f"{name}: unusual Traits need the optional rule (options.unusual_traits)",
            field=f"{at}.unusual",
        )
    if trait.kind == "negative":
        if not options.negative_traits:
            raise RuleError(
                f"{name}: negative Traits need the optional rule (options.negative_traits)",
                field=f"{at}.kind",
            )
        if not trait.negatives:
            raise RuleError(
                f"{name}: a negative Trait needs at least one of Slower, Worse, Expensive",
                field=f"{at}.slower",
            )
        if trait.best:
            raise RuleError(
                f"{name}: a negative Trait cannot be the one the character is best at",
                field=f"{at}.best",
            )
    if stage == "creation":
        if trait.kind == "learned":
            raise RuleError(
                f"{name}: a new character has no learned Traits yet; use kind 'starting'",
                field=f"{at}.kind",
            )
        if trait.positives and trait.negatives and not options.mixed_traits:
            raise RuleError(
                f"{name}: a Trait with both positive and negative adjectives needs the "
                "mixed Traits rule (options.mixed_traits)",
                field=f"{at}.{_first_negative(trait)}",
            )


def _check_budget(character: Character) -> Budget:
    starting = [(i, t) for i, t in enumerate(character.traits) if t.kind == "starting"]
    if len(starting) != 3:
        raise RuleError(
            f"a new character has exactly three starting Traits, not {len(starting)}",
            field="traits",
        )
    if not any(t.best for _, t in starting):
        raise RuleError(
            "mark the Trait the character is best at (best: true): it gets two adjectives",
            field=f"traits[{starting[0][0]}].best",
        )
    base = 0
    for index, trait in starting:
        allowance = _allowance(trait)
        base += allowance
        if trait.positives < allowance:
            raise RuleError(
                f"{trait.name}: picks {allowance} of Faster/Better/Cheaper, has {trait.positives}",
                field=f"traits[{index}].faster",
            )
    negatives = sum(t.negatives for t in character.traits)
    bonus = negatives // 2
    spent = sum(t.positives for t in character.traits)
    if spent != base + bonus:
        extra = f" plus {bonus} for {negatives} negative adjectives" if bonus else ""
        raise RuleError(
            f"the Traits carry {spent} Faster/Better/Cheaper adjectives; a new character "
            f"picks {base}{extra}",
            field="traits",
        )
    return Budget(base=base, from_negatives=bonus, spent=spent)


def _allowance(trait: Trait) -> int:
    # Best Trait two, the others one; narrow +1, unusual -1 ("might ... end up with only a
    # style adjective").
    return max(0, 1 + trait.best + trait.narrow - trait.unusual)


def _first_negative(trait: Trait) -> str:
    return next((n for n in NEGATIVE if getattr(trait, n)), "slower")


def _normalised(character: Character) -> Character:
    traits = [
        msgspec.structs.replace(trait, name=tidy(trait.name), style=tidy(trait.style))
        for trait in character.traits
    ]
    return msgspec.structs.replace(character, name=tidy(character.name), traits=traits)


# --- advancement -----------------------------------------------------------------------------


class NewTrait(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="new_trait",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Learn a new Trait with one of Faster/Better/Cheaper and a style: 1 XP."""

    name: Name
    adjective: PositiveAdjective
    style: Style


class AddAdjective(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="add_adjective",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """One more of Faster/Better/Cheaper on a Trait: XP = its adjectives, style included."""

    trait: Name
    adjective: PositiveAdjective


class RemoveNegative(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="remove_negative",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Remove one negative adjective: XP = the Trait's negative adjectives."""

    trait: Name
    adjective: NegativeAdjective


class ChangeStyle(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="change_style",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Change one style adjective, free after a session."""

    trait: Name
    style: Style


Purchase = NewTrait | AddAdjective | RemoveNegative | ChangeStyle


class Advancement(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    character: Character
    xp: Annotated[int, msgspec.Meta(ge=0, le=10_000, description="XP the character has.")]
    purchase: Purchase


class AdvancementOutcome(msgspec.Struct, frozen=True, kw_only=True):
    cost: int
    xp_before: int
    xp_left: int
    rule: str
    character: Character


def advance(advancement: Advancement) -> AdvancementOutcome:
    """Price a purchase by the seed's XP rules and return the new sheet."""
    sheet = msgspec.structs.replace(advancement.character, stage="advanced")
    sheet = validate_character(sheet).character
    purchase = advancement.purchase
    traits = list(sheet.traits)
    if isinstance(purchase, NewTrait):
        if any(t.name.casefold() == tidy(purchase.name).casefold() for t in traits):
            raise RuleError(
                f"the character already has a Trait named {purchase.name!r}",
                field="purchase.name",
            )
        trait = Trait(
            name=purchase.name,
            style=purchase.style,
            kind="learned",
            faster=int(purchase.adjective == "faster"),
            better=int(purchase.adjective == "better"),
            cheaper=int(purchase.adjective == "cheaper"),
        )
        traits.append(trait)
        cost, rule = 1, "a new Trait costs 1 XP"
    else:
        index = _find(traits, purchase.trait)
        trait = traits[index]
        if isinstance(purchase, AddAdjective):
            cost = trait.positives + trait.negatives + 1
            rule = f"one more adjective costs the Trait's {cost} adjectives, style included"
            opposite = OPPOSITE[purchase.adjective]
            if getattr(trait, opposite):
                raise RuleError(
                    f"{trait.name}: a bought adjective cannot contradict a negative one "
                    f"({purchase.adjective.capitalize()} against {opposite.capitalize()})",
                    field="purchase.adjective",
                )
            grown = msgspec.structs.replace(
                trait, **{purchase.adjective: getattr(trait, purchase.adjective) + 1}
            )
            if grown.faster and grown.better and grown.cheaper:
                raise RuleError(
                    f"{trait.name}: a Trait can never have all three of Faster, Better and Cheaper",
                    field="purchase.adjective",
                )
            traits[index] = grown
        elif isinstance(purchase, RemoveNegative):
            count = getattr(trait, purchase.adjective)
            if not count:
                raise RuleError(
                    f"{trait.name} is not {purchase.adjective.capitalize()}",
                    field="purchase.adjective",
                )
            cost = trait.negatives
            rule = f"removing a negative adjective costs the Trait's {cost} negative adjectives"
            lighter = msgspec.structs.replace(trait, **{purchase.adjective: count - 1})
            if lighter.kind == "negative" and not lighter.negatives:
                # A negative Trait with nothing negative left is just average at it: it goes,
                # unless adjectives bought on it keep it (then it is a learned Trait).
                lighter = msgspec.structs.replace(lighter, kind="learned")
            if lighter.positives or lighter.negatives or lighter.kind != "learned":
                traits[index] = lighter
            else:
                del traits[index]
        else:
            cost, rule = 0, "changing a style adjective after a session is free"
            traits[index] = msgspec.structs.replace(trait, style=purchase.style)
    if cost > advancement.xp:
        raise RuleError(f"this costs {cost} XP and the character has {advancement.xp}", field="xp")
    new_sheet = validate_character(msgspec.structs.replace(sheet, traits=traits)).character
    return AdvancementOutcome(
        cost=cost,
        xp_before=advancement.xp,
        xp_left=advancement.xp - cost,
        rule=rule,
        character=new_sheet,
    )


def _find(traits: list[Trait], name: str) -> int:
    wanted = tidy(name).casefold()
    for index, trait in enumerate(traits):
        if trait.name.casefold() == wanted:
            return index
    raise RuleError(f"the character has no Trait named {name!r}", field="purchase.trait")
