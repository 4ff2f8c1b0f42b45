"""One action: a weapon attack, a spell, initiative, a potion."""

from __future__ import annotations

from typing import Annotated

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.fast_battle.items import Boost, Heal, Potion, Spell
from fairroll.rules.fast_battle.sheet import (
    CURRENT,
    HEADS,
    MAX_HP,
    MAX_SCORE,
    Effective,
    Fighter,
    PotionRef,
    Revision,
    SpellRef,
    _flip,
    _spell_item,
    current_hp,
    effective,
    potion_item,
    unique_names,
)


class Attack(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    attacker: Fighter
    defender: Fighter


class AttackOutcome(msgspec.Struct, frozen=True, kw_only=True):
    attack_flips: tuple[int, ...]
    attack_heads: int
    armor_flips: tuple[int, ...]
    armor_heads: int
    damage: int
    defender_hp: int
    knocked_out: bool


def resolve_attack(
    attack: Attack, dice: DiceSource, *, revision: Revision = CURRENT
) -> AttackOutcome:
    """AF flips (group ``attack``) minus FRW flips (group ``armor``), never below 0."""
    hitter = effective(attack.attacker, "attacker.", revision=revision)
    target = effective(attack.defender, "defender.", revision=revision)
    hp = current_hp(attack.defender)
    return _attack(hitter, target, hp, dice)


def _attack(hitter: Effective, target: Effective, hp: int, dice: DiceSource) -> AttackOutcome:
    a_flips, a_heads = _flip(dice, "attack", hitter.af)
    r_flips, r_heads = _flip(dice, "armor", target.frw)
    damage = max(0, a_heads - r_heads)
    after = max(0, hp - damage)
    return AttackOutcome(
        attack_flips=a_flips,
        attack_heads=a_heads,
        armor_flips=r_flips,
        armor_heads=r_heads,
        damage=damage,
        defender_hp=after,
        knocked_out=after == 0,
    )


class SpellCast(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    attacker: Fighter
    defender: Fighter
    spell: SpellRef


class SpellOutcome(msgspec.Struct, frozen=True, kw_only=True):
    spell: str
    spell_flips: tuple[int, ...]
    attack_total: int
    resist_flips: tuple[int, ...]
    defence_total: int
    nullified: bool
    damage: int
    defender_hp: int
    knocked_out: bool


def resolve_spell(
    cast: SpellCast, dice: DiceSource, *, revision: Revision = CURRENT
) -> SpellOutcome:
    """SP flips (group ``spell``) + MA above the minimum, against FRM flips (``resist``) + MR."""
    caster, target, spell = spell_matchup(cast, revision=revision)
    return _spell(caster, target, spell, current_hp(cast.defender), dice)


def spell_matchup(
    cast: SpellCast, *, revision: Revision = CURRENT
) -> tuple[Effective, Effective, Spell]:
    """The caster's and target's scores in battle, and the spell, once it may be cast."""
    caster = effective(cast.attacker, "attacker.", revision=revision)
    target = effective(cast.defender, "defender.", revision=revision)
    return caster, target, _castable(cast.attacker, caster, cast.spell, "spell")


def _castable(fighter: Fighter, scores: Effective, ref: SpellRef, field: str) -> Spell:
    spell = _spell_item(ref, field)
    if not any(_spell_item(known, field).name == spell.name for known in fighter.spells):
        raise RuleError(f"{fighter.name} has not learnt {spell.name}", field=field)
    if scores.ma < spell.min_ma:
        raise RuleError(
            f"{spell.name} is not available: it needs MA {spell.min_ma} and {fighter.name} "
            f"has {scores.ma} (armour reduces MA)",
            field=field,
        )
    if not scores.free_hand:
        raise RuleError(
            f"{fighter.name} needs a free hand to cast, and wields a two-handed weapon",
            field=field,
        )
    return spell


def _spell(
    caster: Effective, target: Effective, spell: Spell, hp: int, dice: DiceSource
) -> SpellOutcome:
    s_flips, s_heads = _flip(dice, "spell", spell.sp)
    r_flips, r_heads = _flip(dice, "resist", target.frm)
    attack_total = s_heads + caster.ma - spell.min_ma
    defence_total = r_heads + target.mr
    # "if the defender can flip at least 1/2 of that number in defence the spell has no
    #  effect": exactly half or more, without rounding.
    nullified = 2 * defence_total >= attack_total
    damage = 0 if nullified else spell.damage
    after = max(0, hp - damage)
    return SpellOutcome(
        spell=spell.name,
        spell_flips=s_flips,
        attack_total=attack_total,
        resist_flips=r_flips,
        defence_total=defence_total,
        nullified=nullified,
        damage=damage,
        defender_hp=after,
        knocked_out=after == 0,
    )


class Initiative(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    fighters: Annotated[list[Fighter], msgspec.Meta(min_length=2, max_length=8)]


class InitiativeOutcome(msgspec.Struct, frozen=True, kw_only=True):
    order: tuple[str, ...]
    effective_qk: tuple[int, ...]
    tie_flips: tuple[int, ...]


def resolve_initiative(
    initiative: Initiative, dice: DiceSource, *, revision: Revision = CURRENT
) -> InitiativeOutcome:
    """Higher effective QK first; ties broken by flips (group ``initiative``)."""
    scores = [
        effective(f, f"fighters[{i}].", revision=revision)
        for i, f in enumerate(initiative.fighters)
    ]
    unique_names(initiative.fighters)
    order, flips = initiative_order([s.qk for s in scores], dice)
    return InitiativeOutcome(
        order=tuple(initiative.fighters[i].name for i in order),
        effective_qk=tuple(scores[i].qk for i in order),
        tie_flips=flips,
    )


def initiative_order(qks: list[int], dice: DiceSource) -> tuple[list[int], tuple[int, ...]]:
    """Fighter indices by effective QK, ties broken fairly with coins.

    "The character with the higher QK gets to act first." Among k tied fighters the
    next one is drawn uniformly with coins: ceil(log2 k) flips read as a binary number
    (heads 0, tails 1, first flip most significant), flipped again if it is k or more;
    so with two tied, heads keeps the fighter listed first in front.
    """
    order: list[int] = []
    flips: list[int] = []
    for qk in sorted(set(qks), reverse=True):
        tied = [i for i, value in enumerate(qks) if value == qk]
        while len(tied) > 1:
            bits = (len(tied) - 1).bit_length()
            while True:
                faces, _ = _flip(dice, "initiative", bits)
                flips.extend(faces)
                drawn = int("".join("0" if face == HEADS else "1" for face in faces), 2)
                if drawn < len(tied):
                    break
            order.append(tied.pop(drawn))
        order.extend(tied)
    return order, tuple(flips)


class Quaff(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    fighter: Fighter
    potion: PotionRef


class QuaffOutcome(msgspec.Struct, frozen=True, kw_only=True):
    potion: str
    hp_before: int
    hp_after: int
    fighter: Fighter


def quaff(drink: Quaff) -> QuaffOutcome:
    """Drink: "Quaffing a potion does exactly what the potion's description says it does."""
    effective(drink.fighter, "fighter.")
    potion = potion_item(drink.potion, "potion")
    fighter = drink.fighter
    before = current_hp(fighter)
    after = quaffed_hp(potion, before, fighter.max_hp)
    effect = potion.effect
    if isinstance(effect, Boost) and effect.attribute != "hp":
        attribute = effect.attribute
        boosted = getattr(fighter, attribute) + effect.amount
        # "can increase your ST, QK, MA, MR, or HP" by the potion's amount: all of it, or a
        # refusal naming fairroll's limit, never a part.
        if boosted > MAX_SCORE:
            raise RuleError(
                f"{potion.name} would raise {attribute.upper()} to {boosted}, past "
                f"{MAX_SCORE}, fairroll's limit on a score (the rules set none)",
                field="potion",
            )
        fighter = msgspec.structs.replace(fighter, **{attribute: boosted})
    return QuaffOutcome(
        potion=potion.name,
        hp_before=before,
        hp_after=after,
        fighter=msgspec.structs.replace(fighter, hp=after, max_hp=max(fighter.max_hp, after)),
    )


def quaffed_hp(potion: Potion, hp: int, max_hp: int) -> int:
    """HP after drinking: heals stop at the maximum (healing restores what was lost); an
    HP boost goes above it, all of it, and one that would pass the sheet's limit
    (``MAX_HP``, fairroll's) is refused."""
    effect = potion.effect
    if isinstance(effect, Heal):
        return min(max_hp, hp + effect.amount)
    if isinstance(effect, Boost) and effect.attribute == "hp":
        if hp + effect.amount > MAX_HP:
            raise RuleError(
                f"{potion.name} would raise HP to {hp + effect.amount}, past {MAX_HP}, "
                "fairroll's limit on a sheet (the rules set none)",
                field="potion",
            )
        return hp + effect.amount
    return hp
