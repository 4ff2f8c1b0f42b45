"""A Fast Battle System character: the sheet, equipment from the store, battle scores.

A flip is a d2 from the dice source and **heads (face 2) is a success**. A fighter's
equipment is a store item's name or an item written out; :func:`effective` checks the
equipment rules and gives the scores a battle uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Literal, TypeVar

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.fast_battle.catalogue import ARMORS, POTIONS, SPELLS, TRINKETS, WEAPONS
from fairroll.rules.fast_battle.items import SLOT_LIMITS, Armor, Potion, Spell, Trinket, Weapon
from fairroll.rules.vocabulary import Name, check_unique_names

HEADS = 2
ItemT = TypeVar("ItemT")
Attribute = Literal["st", "qk", "in", "ma", "mr"]
#: fairroll's limits of a sheet (the seed sets none): a potion or a level-up that could
#: pass them is refused (the first revision cut it to fit, ``Revision``).
MAX_SCORE = 99
MAX_LEVEL = 100
MAX_HP = 999
#: A battle stops (``ended_by: dice_limit``) once this many coins have been flipped, so
#: a long battle of hard hitters still answers a reply of bounded size (how large, and
#: the command that shows it: docs/rules/fast-battle.md, "Limits that are fairroll's").
MAX_BATTLE_COINS = 4000
Score = Annotated[int, msgspec.Meta(ge=0, le=MAX_SCORE)]
#: The five attributes, each titled in the seed's words (the page labels its fields so).
Strength = Annotated[Score, msgspec.Meta(title="ST (strength)")]
Quickness = Annotated[Score, msgspec.Meta(title="QK (quickness)")]
Intelligence = Annotated[Score, msgspec.Meta(title="IN (intelligence)")]
MagicalAbility = Annotated[Score, msgspec.Meta(title="MA (magical ability)")]
MagicalResistance = Annotated[Score, msgspec.Meta(title="MR (magical resistance)")]
Level = Annotated[int, msgspec.Meta(ge=1, le=MAX_LEVEL)]


class Revision(msgspec.Struct, frozen=True, kw_only=True):
    """A revision of fairroll's reading of these rules: what changed between them.

    New rolls are always resolved under :data:`CURRENT`; an earlier revision is kept only
    so that the entries it recorded still replay as they were recorded (the mechanics
    declare it for the verifier). Every rules function whose answer differs between
    revisions takes ``revision`` as a keyword, the current one by default, so the rules
    stay one copy with the differences named where they act, rather than a second copy
    of the battle that drifts.
    """

    name: str
    #: "the player buys any standard issue weapon and, if desired, a standard issue
    #: armor": a new character must buy one standard issue weapon, and only standard
    #: issue armour. Before, any weapon or none, and any armour.
    standard_issue: bool
    #: Numbers cut to fit: max HP after a level-up stopped at fairroll's limit, a loser's
    #: gold and armour-reduced QK and MA stopped at 0. Now a level-up that could pass the
    #: limit is refused, and the rule's own numbers are kept. (A potion quaffed alone is a
    #: calculation, never recorded, so it has no earlier revision to replay.)
    cut_to_fit: bool


#: The first revision: any weapon or none for a new character, numbers cut to fit.
FIRST = Revision(name="first", standard_issue=False, cut_to_fit=True)
#: The rules every new roll is resolved by.
CURRENT = Revision(name="current", standard_issue=True, cut_to_fit=False)
HP = Annotated[int, msgspec.Meta(ge=0, le=MAX_HP, title="HP now")]
XpText = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9]{1,4}(\.[05])?$",
        description="XP in half points, as text: '0', '1.5', '2.5'.",
        examples=["1.5"],
    ),
]
WeaponRef = Annotated[Weapon | str, msgspec.Meta(description="A store weapon's name, or one.")]
ArmorRef = Annotated[Armor | str, msgspec.Meta(description="A store armour's name, or one.")]
PotionRef = Annotated[Potion | str, msgspec.Meta(description="A store potion's name, or one.")]
TrinketRef = Annotated[Trinket | str, msgspec.Meta(description="A store item's name, or one.")]
SpellRef = Annotated[Spell | str, msgspec.Meta(description="A store spell's name, or one.")]


class Sheet(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A character's attributes, level, XP and maximum HP."""

    name: Name
    level: Level = 1
    xp: Annotated[XpText, msgspec.Meta(title="XP")] = "0"
    st: Strength
    qk: Quickness
    in_: Intelligence = msgspec.field(name="in")
    ma: MagicalAbility
    mr: MagicalResistance
    max_hp: Annotated[int, msgspec.Meta(ge=1, le=MAX_HP, title="Max HP")]


class Fighter(Sheet, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A character ready to fight: current HP and equipment (store names or inline items)."""

    hp: HP | None = None
    weapon: WeaponRef | None = None
    armor: ArmorRef | None = None
    trinkets: Annotated[list[TrinketRef], msgspec.Meta(max_length=7)] = msgspec.field(
        default_factory=list
    )
    potions: Annotated[list[PotionRef], msgspec.Meta(max_length=20)] = msgspec.field(
        default_factory=list
    )
    spells: Annotated[list[SpellRef], msgspec.Meta(max_length=20)] = msgspec.field(
        default_factory=list
    )


class Effective(msgspec.Struct, frozen=True, kw_only=True):
    """Scores in battle: armour penalties and items applied (below 0 if the armour says so)."""

    st: int
    qk: int
    ma: int
    mr: int
    frw: int
    frm: int
    af: int
    free_hand: bool


def effective(fighter: Fighter, at: str = "", *, revision: Revision = CURRENT) -> Effective:
    """Check the equipment rules and return the fighter's battle scores."""
    weapon, armor = _weapon(fighter.weapon, at), _armor(fighter.armor, at)
    trinkets = [_trinket(t, f"{at}trinkets[{i}]") for i, t in enumerate(fighter.trinkets)]
    for slot, limit in SLOT_LIMITS.items():
        if sum(t.slot == slot for t in trinkets) > limit:
            raise RuleError(
                f"{fighter.name} wears more than {limit} {slot} item(s): a character wears one "
                "item around the neck, one on each wrist, two rings and an earring in each ear",
                field=f"{at}trinkets",
            )
    qk = fighter.qk - (armor.qk_penalty if armor else 0) + sum(t.qk_bonus for t in trinkets)
    ma = fighter.ma - (armor.ma_penalty if armor else 0) + sum(t.ma_bonus for t in trinkets)
    scores = Effective(
        st=fighter.st,
        # "a number by which is reduces QK": the text sets no floor, so none is put (the
        # first revision put one at 0).
        qk=max(0, qk) if revision.cut_to_fit else qk,
        ma=max(0, ma) if revision.cut_to_fit else ma,
        mr=fighter.mr + sum(t.mr_bonus for t in trinkets),
        frw=(armor.frw if armor else 0) + sum(t.frw_bonus for t in trinkets),
        frm=(armor.frm if armor else 0) + sum(t.frm_bonus for t in trinkets),
        af=weapon.af if weapon else 0,
        free_hand=weapon is None or weapon.hands < 2,
    )
    if weapon is not None:
        # "some require a certain ST or QK amount": a requirement of 0 is none, so armour
        # that takes QK below 0 leaves a weapon without a QK requirement in hand.
        for need, have, label in (
            (weapon.min_st, scores.st, "ST"),
            (weapon.min_qk, scores.qk, "QK"),
            (weapon.min_level, fighter.level, "level"),
        ):
            if need > 0 and have < need:
                raise RuleError(
                    f"{fighter.name} cannot wield the {weapon.name}: it needs {label} {need}, "
                    f"and {fighter.name} has {have}",
                    field=f"{at}weapon",
                )
    if fighter.hp is not None and fighter.hp > fighter.max_hp:
        raise RuleError(
            f"{fighter.name} has {fighter.hp} HP, above the maximum {fighter.max_hp}",
            field=f"{at}hp",
        )
    return scores


def xp_text(halves: int) -> str:
    """Half points as text: 3 -> '1.5'."""
    return f"{halves // 2}.5" if halves % 2 else str(halves // 2)


def _halves(text: str) -> int:
    whole, _, half = text.partition(".")
    return int(whole) * 2 + (half == "5")


def _flip(dice: DiceSource, group: str, count: int) -> tuple[tuple[int, ...], int]:
    faces = dice.roll(group, 2, count) if count else ()
    return faces, sum(face == HEADS for face in faces)


def unique_names(fighters: Sequence[Fighter]) -> None:
    check_unique_names([f.name for f in fighters], "fighters")


def current_hp(fighter: Fighter) -> int:
    return fighter.max_hp if fighter.hp is None else fighter.hp


# --- the store -----------------------------------------------------------------------------


def _store_item(name: str, field: str) -> tuple[Weapon | Armor | Potion | Spell | Trinket, str]:
    shelves: tuple[tuple[str, Mapping[str, Weapon | Armor | Potion | Spell | Trinket]], ...] = (
        ("weapon", WEAPONS),
        ("armor", ARMORS),
        ("potions", POTIONS),
        ("spells", SPELLS),
        ("trinket", TRINKETS),
    )
    for kind, shelf in shelves:
        if name in shelf:
            return shelf[name], kind
    raise RuleError(f"the store sells no {name!r}", field=field)


def _lookup(ref: ItemT | str, shelf: Mapping[str, ItemT], what: str, field: str) -> ItemT:
    if isinstance(ref, str):
        if ref not in shelf:
            raise RuleError(f"the store sells no {what} called {ref!r}", field=field)
        return shelf[ref]
    return ref


def _weapon(ref: Weapon | str | None, at: str) -> Weapon | None:
    return None if ref is None else _lookup(ref, WEAPONS, "weapon", f"{at}weapon")


def _armor(ref: Armor | str | None, at: str) -> Armor | None:
    return None if ref is None else _lookup(ref, ARMORS, "armour", f"{at}armor")


def _trinket(ref: Trinket | str, field: str) -> Trinket:
    return _lookup(ref, TRINKETS, "item", field)


def potion_item(ref: Potion | str, field: str) -> Potion:
    return _lookup(ref, POTIONS, "potion", field)


def _spell_item(ref: Spell | str, field: str) -> Spell:
    return _lookup(ref, SPELLS, "spell", field)


def _item_name(item: Weapon | Armor | str) -> str:
    return item if isinstance(item, str) else item.name
