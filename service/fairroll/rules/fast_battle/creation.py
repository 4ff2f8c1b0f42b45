"""Character creation: points allocated, three bonus flips, HP flips, 5 gold to spend."""

from __future__ import annotations

from typing import Annotated

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.fast_battle.items import Armor, Weapon
from fairroll.rules.fast_battle.sheet import (
    CURRENT,
    Attribute,
    Fighter,
    Intelligence,
    MagicalAbility,
    MagicalResistance,
    PotionRef,
    Quickness,
    Revision,
    SpellRef,
    Strength,
    TrinketRef,
    _flip,
    _spell_item,
    _store_item,
    effective,
)
from fairroll.rules.vocabulary import Name


class Allocation(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    st: Strength = 0
    qk: Quickness = 0
    in_: Intelligence = msgspec.field(name="in", default=0)
    ma: MagicalAbility = 0
    mr: MagicalResistance = 0

    def total(self) -> int:
        return self.st + self.qk + self.in_ + self.ma + self.mr


class NewCharacter(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new character: ``points`` (at least 6) placed by ``allocation``; the three bonus
    flips' heads go to ``bonus`` in order; ``buy`` names store items bought with 5 gold."""

    name: Name
    description: Annotated[str, msgspec.Meta(max_length=500)] | None = None
    points: Annotated[int, msgspec.Meta(ge=6, le=60)] = 6
    allocation: Allocation
    bonus: Annotated[list[Attribute], msgspec.Meta(min_length=3, max_length=3)]
    buy: Annotated[
        list[Annotated[str, msgspec.Meta(max_length=64)]], msgspec.Meta(max_length=20)
    ] = msgspec.field(default_factory=list)


class NewCharacterOutcome(msgspec.Struct, frozen=True, kw_only=True):
    bonus_flips: tuple[int, ...]
    bonus_heads: int
    hp_flips: tuple[int, ...]
    hp_heads: int
    gold_spent: int
    character: Fighter
    gold: int


def starting_scores(new: NewCharacter) -> dict[str, int]:
    """The attributes as allocated, once the allocation places exactly ``points``."""
    if new.allocation.total() != new.points:
        raise RuleError(
            f"the allocation places {new.allocation.total()} points; place exactly {new.points}",
            field="allocation",
        )
    return {
        "st": new.allocation.st,
        "qk": new.allocation.qk,
        "in": new.allocation.in_,
        "ma": new.allocation.ma,
        "mr": new.allocation.mr,
    }


def resolve_new_character(
    new: NewCharacter, dice: DiceSource, *, revision: Revision = CURRENT
) -> NewCharacterOutcome:
    """Flip 3 coins for bonus points (group ``bonus``), then ST coins for HP (group ``hp``).

    The shopping list is checked before any coin (it needs none), so the odds of a
    character refuse what making it refuses; wielding the weapon and casting the spells
    bought are checked after the flips, which may add the ST they need.
    """
    scores = starting_scores(new)
    basket = _shop(new.buy, revision)
    bonus_flips, bonus_heads = _flip(dice, "bonus", 3)
    for attribute in new.bonus[:bonus_heads]:
        scores[attribute] += 1
    # "New characters have 5 hit-points; the player also flips one coin for each point of ST"
    hp_flips, hp_heads = _flip(dice, "hp", scores["st"])
    max_hp = 5 + hp_heads
    weapons, armors, potions, spells, trinkets, spent = basket
    character = Fighter(
        name=new.name,
        st=scores["st"],
        qk=scores["qk"],
        in_=scores["in"],
        ma=scores["ma"],
        mr=scores["mr"],
        max_hp=max_hp,
        hp=max_hp,
        weapon=weapons[0] if weapons else None,
        armor=armors[0] if armors else None,
        trinkets=trinkets,
        potions=potions,
        spells=spells,
    )
    scores_in_battle = effective(character, "buy.", revision=revision)
    for ref in spells:
        spell = _spell_item(ref, "buy")
        if scores_in_battle.ma < spell.min_ma:
            raise RuleError(
                f"{spell.name} needs MA {spell.min_ma}; {new.name} has {scores_in_battle.ma} "
                "(armour reduces MA)",
                field="buy",
            )
    return NewCharacterOutcome(
        bonus_flips=bonus_flips,
        bonus_heads=bonus_heads,
        hp_flips=hp_flips,
        hp_heads=hp_heads,
        gold_spent=spent,
        character=character,
        gold=5 - spent,
    )


_Basket = tuple[list[str], list[str], list[PotionRef], list[SpellRef], list[TrinketRef], int]


def _shop(buy: list[str], revision: Revision) -> _Basket:
    """Check a new character's shopping list against the store and the 5 gold.

    "Having done that, the player buys any standard issue weapon and, if desired, a
    standard issue armor": exactly one weapon, standard issue; at most one armour,
    standard issue; the store marks which (``standard_issue``). The first revision
    took at most one weapon and one armour, of any kind.
    """
    weapons: list[str] = []
    armors: list[str] = []
    potions: list[PotionRef] = []
    spells: list[SpellRef] = []
    trinkets: list[TrinketRef] = []
    shelves: dict[str, list[str]] = {"weapon": weapons, "armor": armors}
    spent = 0
    for index, name in enumerate(buy):
        item, kind = _store_item(name, f"buy[{index}]")
        spent += item.price
        if isinstance(item, Weapon | Armor):
            if revision.standard_issue and not item.standard_issue:
                what = "weapon" if kind == "weapon" else "armour"
                raise RuleError(
                    f"the {name} is not standard issue: a new character buys a standard "
                    f"issue {what} (the store marks which)",
                    field=f"buy[{index}]",
                )
            if shelves[kind]:
                raise RuleError(f"buy at most one {kind}", field=f"buy[{index}]")
            shelves[kind].append(name)
        elif kind == "potions":
            potions.append(name)
        elif kind == "spells":
            spells.append(name)
        else:
            trinkets.append(name)
    if not weapons and revision.standard_issue:
        raise RuleError(
            'a new character buys a standard issue weapon ("the player buys any standard '
            'issue weapon"): name one in buy',
            field="buy",
        )
    if spent > 5:
        raise RuleError(f"the purchases cost {spent} gold; a new character has 5", field="buy")
    return weapons, armors, potions, spells, trinkets, spent
