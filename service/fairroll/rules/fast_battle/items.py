"""Fast Battle System items: weapons, armour, potions, miscellaneous items and spells."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

__all__ = [
    "SLOT_LIMITS",
    "Armor",
    "Boost",
    "Heal",
    "Potion",
    "Slot",
    "Spell",
    "Trinket",
    "Weapon",
]

Slot = Literal["neck", "wrist", "ring", "ear"]
BoostAttribute = Literal["st", "qk", "ma", "mr", "hp"]

#: "One item around his neck, one item on each wrist, two rings, and an earring in each ear."
SLOT_LIMITS: dict[str, int] = {"neck": 1, "wrist": 2, "ring": 2, "ear": 2}

ItemName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Flips = Annotated[int, msgspec.Meta(ge=0, le=20)]
Small = Annotated[int, msgspec.Meta(ge=0, le=20)]
Price = Annotated[int, msgspec.Meta(ge=0, le=10_000)]


class Weapon(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """AF: attack flips. Some need ST, QK or a level; two-handed ones stop spellcasting."""

    name: ItemName
    af: Annotated[Flips, msgspec.Meta(title="AF (attack flips)")]
    hands: Literal[1, 2] = 1
    min_st: Small = 0
    min_qk: Small = 0
    min_level: Annotated[int, msgspec.Meta(ge=1, le=100)] = 1
    price: Price = 0
    #: Whether a new character may buy it ("the player buys any standard issue weapon").
    standard_issue: bool = False


class Armor(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """FRW/FRM: flips resisting weapons and magic; it slows (QK) and dulls magic (MA)."""

    name: ItemName
    frw: Annotated[Flips, msgspec.Meta(title="FRW (flips resisting weapons)")]
    frm: Annotated[Flips, msgspec.Meta(title="FRM (flips resisting magic)")]
    qk_penalty: Small = 0
    ma_penalty: Small = 0
    price: Price = 0
    #: Whether a new character may buy it ("and, if desired, a standard issue armor").
    standard_issue: bool = False


class Heal(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="heal",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Restore this many HP, up to the maximum."""

    amount: Annotated[int, msgspec.Meta(ge=1, le=100)]


class Boost(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag="boost",
    tag_field="kind",
    forbid_unknown_fields=True,
):
    """Raise ST, QK, MA, MR or HP for the rest of the battle."""

    attribute: BoostAttribute
    amount: Annotated[int, msgspec.Meta(ge=1, le=20)]


class Potion(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: ItemName
    effect: Heal | Boost
    price: Price = 0


class Trinket(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A miscellaneous item (amulet, bracer, ring, earring) worn in a slot."""

    name: ItemName
    slot: Slot
    frw_bonus: Small = 0
    frm_bonus: Small = 0
    qk_bonus: Small = 0
    ma_bonus: Small = 0
    mr_bonus: Small = 0
    price: Price = 0


class Spell(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """SP: spell penetration flips. Needs MA >= min_ma; its effect here is damage."""

    name: ItemName
    sp: Annotated[int, msgspec.Meta(ge=1, le=20, title="SP (spell penetration)")]
    min_ma: Annotated[Small, msgspec.Meta(title="Minimum MA")]
    damage: Annotated[int, msgspec.Meta(ge=0, le=100)]
    price: Price = 0
