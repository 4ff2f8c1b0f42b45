"""The Fast Battle System (John Floren, 2005): coin-flip characters, battles and rewards.

Every action is a number of coin flips; a flip is a d2 from the dice source
and **heads (face 2) is a success**. A weapon attack flips its AF, the
defender's armour flips its FRW, and the difference (never below 0) is lost
from HP. A spell flips its SP plus the caster's MA above the spell's minimum;
the defender flips FRM plus MR, and reaching half the caster's total nullifies
it. The higher effective QK acts first.

>>> rewards(winner_level=3, loser_level=4)
Rewards(winner_gold=20, loser_gold=7, winner_xp='1.5', loser_xp='0')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal, TypeVar

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.fast_battle_catalogue import ARMORS, POTIONS, SPELLS, TRINKETS, WEAPONS
from fairroll.rules.fast_battle_items import (
    SLOT_LIMITS,
    Armor,
    Boost,
    Heal,
    Potion,
    Spell,
    Trinket,
    Weapon,
)

__all__ = [
    "HEADS",
    "Attack",
    "AttackOutcome",
    "Battle",
    "BattleOutcome",
    "BattleTurn",
    "Combatant",
    "Duel",
    "Fighter",
    "Initiative",
    "InitiativeOutcome",
    "LevelPlan",
    "LevelUp",
    "LevelUpOutcome",
    "NewCharacter",
    "NewCharacterOutcome",
    "Quaff",
    "QuaffOutcome",
    "Rewards",
    "RewardsInput",
    "Sheet",
    "SpellCast",
    "SpellOutcome",
    "Tactic",
    "current_hp",
    "effective",
    "plan_level_up",
    "planned_spell",
    "potion_item",
    "quaff",
    "quaffed_hp",
    "resolve_attack",
    "resolve_battle",
    "resolve_initiative",
    "resolve_level_up",
    "resolve_new_character",
    "resolve_spell",
    "rewards",
    "spell_matchup",
    "starting_scores",
    "unique_names",
    "xp_text",
]

HEADS = 2
ItemT = TypeVar("ItemT")
Attribute = Literal["st", "qk", "in", "ma", "mr"]
#: fairroll's limits of a sheet (the seed sets none): potion boosts and HP gains stop at
#: them, and a level-up past them is refused.
MAX_SCORE = 99
MAX_LEVEL = 100
MAX_HP = 999
#: A battle stops (``ended_by: dice_limit``) once this many coins have been flipped: at
#: most 40 a turn, so about a hundred turns of the hardest hitters, a reply of ~200 KB.
MAX_BATTLE_COINS = 4000
Score = Annotated[int, msgspec.Meta(ge=0, le=MAX_SCORE)]
Level = Annotated[int, msgspec.Meta(ge=1, le=MAX_LEVEL)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
HP = Annotated[int, msgspec.Meta(ge=0, le=MAX_HP)]
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
    xp: XpText = "0"
    st: Score
    qk: Score
    in_: Score = msgspec.field(name="in")
    ma: Score
    mr: Score
    max_hp: Annotated[int, msgspec.Meta(ge=1, le=MAX_HP)]


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
    """Scores in battle: armour penalties and items applied (never below 0)."""

    st: int
    qk: int
    ma: int
    mr: int
    frw: int
    frm: int
    af: int
    free_hand: bool


def effective(fighter: Fighter, at: str = "") -> Effective:
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
        qk=max(0, qk),
        ma=max(0, ma),
        mr=fighter.mr + sum(t.mr_bonus for t in trinkets),
        frw=(armor.frw if armor else 0) + sum(t.frw_bonus for t in trinkets),
        frm=(armor.frm if armor else 0) + sum(t.frm_bonus for t in trinkets),
        af=weapon.af if weapon else 0,
        free_hand=weapon is None or weapon.hands < 2,
    )
    if weapon is not None:
        for need, have, label in (
            (weapon.min_st, scores.st, "ST"),
            (weapon.min_qk, scores.qk, "QK"),
            (weapon.min_level, fighter.level, "level"),
        ):
            if have < need:
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


# --- flips ---------------------------------------------------------------------------------


def _flip(dice: DiceSource, group: str, count: int) -> tuple[tuple[int, ...], int]:
    faces = dice.roll(group, 2, count) if count else ()
    return faces, sum(face == HEADS for face in faces)


# --- character creation --------------------------------------------------------------------


class Allocation(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    st: Score = 0
    qk: Score = 0
    in_: Score = msgspec.field(name="in", default=0)
    ma: Score = 0
    mr: Score = 0

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


def resolve_new_character(new: NewCharacter, dice: DiceSource) -> NewCharacterOutcome:
    """Flip 3 coins for bonus points (group ``bonus``), then ST coins for HP (group ``hp``)."""
    scores = starting_scores(new)
    bonus_flips, bonus_heads = _flip(dice, "bonus", 3)
    for attribute in new.bonus[:bonus_heads]:
        scores[attribute] += 1
    # "New characters have 5 hit-points; the player also flips one coin for each point of ST"
    hp_flips, hp_heads = _flip(dice, "hp", scores["st"])
    max_hp = 5 + hp_heads
    weapons: list[str] = []
    armors: list[str] = []
    potions: list[PotionRef] = []
    spells: list[SpellRef] = []
    trinkets: list[TrinketRef] = []
    shelves: dict[str, list[str]] = {"weapon": weapons, "armor": armors}
    spent = 0
    for index, name in enumerate(new.buy):
        item, kind = _store_item(name, f"buy[{index}]")
        spent += item.price
        if kind in shelves:
            if shelves[kind]:
                raise RuleError(f"buy at most one {kind}", field=f"buy[{index}]")
            shelves[kind].append(name)
        elif kind == "potions":
            potions.append(name)
        elif kind == "spells":
            spells.append(name)
        else:
            trinkets.append(name)
    if spent > 5:
        raise RuleError(f"the purchases cost {spent} gold; a new character has 5", field="buy")
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
    scores_in_battle = effective(character, "buy.")
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


# --- actions -------------------------------------------------------------------------------


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


def resolve_attack(attack: Attack, dice: DiceSource) -> AttackOutcome:
    """AF flips (group ``attack``) minus FRW flips (group ``armor``), never below 0."""
    hitter = effective(attack.attacker, "attacker.")
    target = effective(attack.defender, "defender.")
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


def resolve_spell(cast: SpellCast, dice: DiceSource) -> SpellOutcome:
    """SP flips (group ``spell``) + MA above the minimum, against FRM flips (``resist``) + MR."""
    caster, target, spell = spell_matchup(cast)
    return _spell(caster, target, spell, current_hp(cast.defender), dice)


def spell_matchup(cast: SpellCast) -> tuple[Effective, Effective, Spell]:
    """The caster's and target's scores in battle, and the spell, once it may be cast."""
    caster = effective(cast.attacker, "attacker.")
    target = effective(cast.defender, "defender.")
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


def resolve_initiative(initiative: Initiative, dice: DiceSource) -> InitiativeOutcome:
    """Higher effective QK first; ties broken by flips (group ``initiative``)."""
    scores = [effective(f, f"fighters[{i}].") for i, f in enumerate(initiative.fighters)]
    unique_names(initiative.fighters)
    order, flips = _order([s.qk for s in scores], dice)
    return InitiativeOutcome(
        order=tuple(initiative.fighters[i].name for i in order),
        effective_qk=tuple(scores[i].qk for i in order),
        tie_flips=flips,
    )


def _order(qks: list[int], dice: DiceSource) -> tuple[list[int], tuple[int, ...]]:
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
        boosted = min(MAX_SCORE, getattr(fighter, attribute) + effect.amount)
        fighter = msgspec.structs.replace(fighter, **{attribute: boosted})
    return QuaffOutcome(
        potion=potion.name,
        hp_before=before,
        hp_after=after,
        fighter=msgspec.structs.replace(fighter, hp=after, max_hp=max(fighter.max_hp, after)),
    )


# --- battles -------------------------------------------------------------------------------


class Tactic(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a fighter does each turn: drink a healing potion below ``heal_below`` HP; else
    cast ``cast_spell`` when able; else attack with the weapon."""

    heal_below: Annotated[int, msgspec.Meta(ge=1, le=999)] | None = None
    cast_spell: SpellRef | None = None


class Combatant(Fighter, frozen=True, kw_only=True, forbid_unknown_fields=True):
    tactic: Tactic = msgspec.field(default_factory=Tactic)


class Battle(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two or more fighters, fought turn by turn until one stands (or the turn cap, or
    ``MAX_BATTLE_COINS`` coins)."""

    fighters: Annotated[list[Combatant], msgspec.Meta(min_length=2, max_length=6)]
    max_turns: Annotated[int, msgspec.Meta(ge=1, le=500)] = 100


class Duel(Battle, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A battle of exactly two fighters: what battle odds are computed for."""

    fighters: Annotated[list[Combatant], msgspec.Meta(min_length=2, max_length=2)]


class BattleTurn(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    actor: str
    action: Literal["attack", "spell", "potion", "pass"]
    target: str | None
    attack: AttackOutcome | None = None
    spell: SpellOutcome | None = None
    potion: str | None = None
    actor_hp: int
    target_hp: int | None


class Rewards(msgspec.Struct, frozen=True, kw_only=True):
    winner_gold: int
    loser_gold: int
    winner_xp: str
    loser_xp: str


class RewardsInput(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    winner_level: Level
    loser_level: Level


class LoserReward(msgspec.Struct, frozen=True, kw_only=True):
    loser: str
    rewards: Rewards
    spoils: tuple[str, ...]


class BattleOutcome(msgspec.Struct, frozen=True, kw_only=True):
    initiative: InitiativeOutcome
    turns: tuple[BattleTurn, ...]
    winner: str | None
    #: ``dice_limit``: fairroll's bound on one battle's coins (``MAX_BATTLE_COINS``) ran out.
    ended_by: Literal["knockout", "turn_cap", "dice_limit"]
    hp: dict[str, int]
    rewards: tuple[LoserReward, ...]
    winner_gold: int
    winner_xp: str


def rewards(*, winner_level: int, loser_level: int) -> Rewards:
    """Gold and XP after a battle, by the worked example's arithmetic."""
    higher = max(0, loser_level - winner_level)  # levels the loser stood above the winner
    lower = max(0, winner_level - loser_level)  # levels the loser stood below the winner
    # Winner: "5 gold pieces for each of his levels and another 5 gold for each level above
    # his that his opponent was at"; the example's "17 gold (5*4 - 3*1)" also takes 3 per
    # level the opponent was below.
    winner_gold = 5 * winner_level + 5 * higher - 3 * lower
    # Loser: "five gold for half of his levels (rounded up), with 3 gold subtracted for each
    # level lower that his opponent was" and "an extra 3 gold for each level's difference"
    # when the loser is lower.
    loser_gold = 5 * ((loser_level + 1) // 2) - 3 * higher + 3 * lower
    return Rewards(
        winner_gold=max(0, winner_gold),
        loser_gold=max(0, loser_gold),
        winner_xp=xp_text(2 + higher),  # "1 XP plus .5 XP for each level higher"
        loser_xp="0",
    )


def resolve_battle(battle: Battle, dice: DiceSource) -> BattleOutcome:
    """Fight: initiative, then turns in order until one fighter stands or the turn cap."""
    fighters = battle.fighters
    unique_names(fighters)
    scores = [effective(f, f"fighters[{i}].") for i, f in enumerate(fighters)]
    hp = [current_hp(f) for f in fighters]
    potions = [
        [potion_item(p, f"fighters[{i}].potions") for p in f.potions]
        for i, f in enumerate(fighters)
    ]
    plans = [
        planned_spell(f, s, f"fighters[{i}].tactic.cast_spell")
        for i, (f, s) in enumerate(zip(fighters, scores, strict=True))
    ]
    order, flips = _order([s.qk for s in scores], dice)
    initiative = InitiativeOutcome(
        order=tuple(fighters[i].name for i in order),
        effective_qk=tuple(scores[i].qk for i in order),
        tie_flips=flips,
    )
    turns: list[BattleTurn] = []
    number = 0
    spent = False
    while number < battle.max_turns and sum(h > 0 for h in hp) > 1 and not spent:
        for actor in order:
            if number >= battle.max_turns or sum(h > 0 for h in hp) <= 1:
                break
            # fairroll's bound, not the rules': a battle's reply stays a battle's size.
            if len(dice.dice) >= MAX_BATTLE_COINS:
                spent = True
                break
            if hp[actor] == 0:
                continue
            number += 1
            turns.append(_turn(number, actor, order, fighters, scores, hp, potions, plans, dice))
    alive = [i for i, h in enumerate(hp) if h > 0]
    winner = alive[0] if len(alive) == 1 else None
    loser_rewards: list[LoserReward] = []
    if winner is not None:
        for loser in range(len(fighters)):
            if loser != winner:
                loot = tuple(
                    _item_name(item)
                    for item in (fighters[loser].weapon, fighters[loser].armor)
                    if item is not None
                )
                loser_rewards.append(
                    LoserReward(
                        loser=fighters[loser].name,
                        rewards=rewards(
                            winner_level=fighters[winner].level,
                            loser_level=fighters[loser].level,
                        ),
                        spoils=loot,
                    )
                )
    return BattleOutcome(
        initiative=initiative,
        turns=tuple(turns),
        winner=fighters[winner].name if winner is not None else None,
        ended_by="knockout" if winner is not None else "dice_limit" if spent else "turn_cap",
        hp={f.name: h for f, h in zip(fighters, hp, strict=True)},
        rewards=tuple(loser_rewards),
        winner_gold=sum(r.rewards.winner_gold for r in loser_rewards),
        winner_xp=xp_text(sum(_halves(r.rewards.winner_xp) for r in loser_rewards)),
    )


def _turn(
    number: int,
    actor: int,
    order: list[int],
    fighters: list[Combatant],
    scores: list[Effective],
    hp: list[int],
    potions: list[list[Potion]],
    plans: list[Spell | None],
    dice: DiceSource,
) -> BattleTurn:
    me = fighters[actor]
    tactic = me.tactic
    heal = next((p for p in potions[actor] if isinstance(p.effect, Heal)), None)
    if tactic.heal_below is not None and hp[actor] < tactic.heal_below and heal is not None:
        potions[actor].remove(heal)
        hp[actor] = quaffed_hp(heal, hp[actor], me.max_hp)
        return BattleTurn(
            number=number,
            actor=me.name,
            action="potion",
            target=None,
            potion=heal.name,
            actor_hp=hp[actor],
            target_hp=None,
        )
    target = _next_alive(actor, order, hp)
    spell = plans[actor]
    if spell is not None:
        cast = _spell(scores[actor], scores[target], spell, hp[target], dice)
        hp[target] = cast.defender_hp
        return BattleTurn(
            number=number,
            actor=me.name,
            action="spell",
            target=fighters[target].name,
            spell=cast,
            actor_hp=hp[actor],
            target_hp=hp[target],
        )
    if scores[actor].af == 0:
        return BattleTurn(
            number=number,
            actor=me.name,
            action="pass",
            target=None,
            actor_hp=hp[actor],
            target_hp=None,
        )
    hit = _attack(scores[actor], scores[target], hp[target], dice)
    hp[target] = hit.defender_hp
    return BattleTurn(
        number=number,
        actor=me.name,
        action="attack",
        target=fighters[target].name,
        attack=hit,
        actor_hp=hp[actor],
        target_hp=hp[target],
    )


def quaffed_hp(potion: Potion, hp: int, max_hp: int) -> int:
    """HP after drinking: heals stop at the maximum; an HP boost goes above it, up to the
    sheet's limit (``MAX_HP``)."""
    effect = potion.effect
    if isinstance(effect, Heal):
        return min(max_hp, hp + effect.amount)
    if isinstance(effect, Boost) and effect.attribute == "hp":
        return min(MAX_HP, hp + effect.amount)
    return hp


def planned_spell(fighter: Combatant, scores: Effective, field: str) -> Spell | None:
    if fighter.tactic.cast_spell is None:
        return None
    try:
        return _castable(fighter, scores, fighter.tactic.cast_spell, field)
    except RuleError:
        if _spell_item(fighter.tactic.cast_spell, field).name not in {
            _spell_item(s, field).name for s in fighter.spells
        }:
            raise
        return None  # known but not available now (MA or hands): "cast a spell when able"


def _next_alive(actor: int, order: list[int], hp: list[int]) -> int:
    start = order.index(actor)
    for step in range(1, len(order)):
        candidate = order[(start + step) % len(order)]
        if hp[candidate] > 0:
            return candidate
    return actor


def unique_names(fighters: list[Fighter] | list[Combatant]) -> None:
    names = [f.name for f in fighters]
    for index, name in enumerate(names):
        if names.index(name) != index:
            raise RuleError(f"two fighters are named {name!r}", field=f"fighters[{index}].name")


def current_hp(fighter: Fighter) -> int:
    return fighter.max_hp if fighter.hp is None else fighter.hp


# --- level-ups -----------------------------------------------------------------------------


class LevelUp(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """XP gained is added; every 3 XP is a level: IN new points (``assign``, in order,
    across all levels gained), +3 HP and one flip per ST for extra HP."""

    character: Sheet
    xp_gained: XpText = "0"
    assign: Annotated[list[Attribute], msgspec.Meta(max_length=400)] = msgspec.field(
        default_factory=list
    )


class LevelGained(msgspec.Struct, frozen=True, kw_only=True):
    level: int
    points: int
    assigned: tuple[Attribute, ...]
    hp_flips: tuple[int, ...]
    hp_gained: int


class LevelUpOutcome(msgspec.Struct, frozen=True, kw_only=True):
    levels: tuple[LevelGained, ...]
    character: Sheet


class LevelPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a level-up decides before any coin: each new level's points and assignments,
    the ST it flips for HP, and the sheet afterwards (``max_hp`` before those flips)."""

    levels: tuple[tuple[int, int, tuple[Attribute, ...], int], ...]  # level, points, assigned, ST
    character: Sheet


def plan_level_up(level_up: LevelUp) -> LevelPlan:
    """Check a level-up and lay out its levels; only the HP flips are left to chance."""
    sheet = level_up.character
    xp = _halves(sheet.xp) + _halves(level_up.xp_gained)
    scores = {"st": sheet.st, "qk": sheet.qk, "in": sheet.in_, "ma": sheet.ma, "mr": sheet.mr}
    level = sheet.level
    queue = list(level_up.assign)
    levels: list[tuple[int, int, tuple[Attribute, ...], int]] = []
    while xp >= 6:  # 3 XP, in half points
        xp -= 6
        level += 1
        if level > MAX_LEVEL:
            raise RuleError(
                f"the XP would bring {sheet.name} past level {MAX_LEVEL}, fairroll's limit",
                field="xp_gained",
            )
        points = scores["in"]
        if len(queue) < points:
            raise RuleError(
                f"level {level} brings {points} attribute points (IN), but only {len(queue)} "
                "assignments are left",
                field="assign",
            )
        assigned = tuple(queue[:points])
        del queue[:points]
        for attribute in assigned:
            scores[attribute] += 1
            if scores[attribute] > MAX_SCORE:
                raise RuleError(
                    f"{attribute.upper()} would pass {MAX_SCORE}, fairroll's limit",
                    field="assign",
                )
        levels.append((level, points, assigned, scores["st"]))
    if queue:
        raise RuleError(
            f"{len(queue)} assignments are left over: the levels gained bring "
            f"{sum(points for _, points, _, _ in levels)} points",
            field="assign",
        )
    character = msgspec.structs.replace(
        sheet,
        level=level,
        xp=xp_text(xp),
        st=scores["st"],
        qk=scores["qk"],
        in_=scores["in"],
        ma=scores["ma"],
        mr=scores["mr"],
    )
    return LevelPlan(levels=tuple(levels), character=character)


def resolve_level_up(level_up: LevelUp, dice: DiceSource) -> LevelUpOutcome:
    """Level up while XP >= 3 (group ``hp``: one flip per ST at each new level)."""
    plan = plan_level_up(level_up)
    max_hp = plan.character.max_hp
    gained: list[LevelGained] = []
    for level, points, assigned, st in plan.levels:
        flips, heads = _flip(dice, "hp", st)
        # Gains are never negative, so capping each level is capping the total.
        max_hp = min(MAX_HP, max_hp + 3 + heads)
        gained.append(
            LevelGained(
                level=level, points=points, assigned=assigned, hp_flips=flips, hp_gained=3 + heads
            )
        )
    character = msgspec.structs.replace(plan.character, max_hp=max_hp)
    return LevelUpOutcome(levels=tuple(gained), character=character)


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
