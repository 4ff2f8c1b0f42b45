"""A whole battle, turn by turn, each fighter in its own state, and the rewards after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.fast_battle.actions import (
    AttackOutcome,
    InitiativeOutcome,
    SpellOutcome,
    _attack,
    _castable,
    _spell,
    initiative_order,
    quaffed_hp,
)
from fairroll.rules.fast_battle.items import Heal, Potion, Spell
from fairroll.rules.fast_battle.sheet import (
    CURRENT,
    MAX_BATTLE_COINS,
    Effective,
    Fighter,
    Level,
    Revision,
    SpellRef,
    _halves,
    _item_name,
    _spell_item,
    current_hp,
    effective,
    potion_item,
    unique_names,
    xp_text,
)


class Tactic(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a fighter does each turn: drink a healing potion below ``heal_below`` HP; else
    cast ``cast_spell`` when able; else attack with the weapon."""

    heal_below: Annotated[int, msgspec.Meta(ge=1, le=999, title="Heal below HP")] | None = None
    cast_spell: Annotated[SpellRef, msgspec.Meta(title="Cast spell")] | None = None


class Combatant(Fighter, frozen=True, kw_only=True, forbid_unknown_fields=True):
    tactic: Tactic = msgspec.field(default_factory=Tactic)


class Battle(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two or more fighters, fought turn by turn until one stands (or the turn cap, or
    ``MAX_BATTLE_COINS`` coins)."""

    fighters: Annotated[list[Combatant], msgspec.Meta(min_length=2, max_length=6)]
    max_turns: Annotated[int, msgspec.Meta(ge=1, le=500)] = 100


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


def rewards(*, winner_level: int, loser_level: int, revision: Revision = CURRENT) -> Rewards:
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
    # The text sets no floor: a high-level loser beaten far below his level gets a negative
    # number (he pays), recorded as the rule gives it (the first revision put it at 0).
    if revision.cut_to_fit:
        winner_gold, loser_gold = max(0, winner_gold), max(0, loser_gold)
    return Rewards(
        winner_gold=winner_gold,
        loser_gold=loser_gold,
        winner_xp=xp_text(2 + higher),  # "1 XP plus .5 XP for each level higher"
        loser_xp="0",
    )


@dataclass(slots=True)
class _InBattle:
    """One fighter as the battle goes: the sheet, its battle scores, its HP now, the potions
    it has left and the spell it casts when able."""

    fighter: Combatant
    scores: Effective
    hp: int
    potions: list[Potion]
    plan: Spell | None

    @property
    def standing(self) -> bool:
        return self.hp > 0


def resolve_battle(
    battle: Battle, dice: DiceSource, *, revision: Revision = CURRENT
) -> BattleOutcome:
    """Fight: initiative, then turns in order until one fighter stands or the turn cap."""
    fighters = battle.fighters
    unique_names(fighters)
    states = [_in_battle(f, f"fighters[{i}].", revision) for i, f in enumerate(fighters)]
    order, flips = initiative_order([s.scores.qk for s in states], dice)
    initiative = InitiativeOutcome(
        order=tuple(fighters[i].name for i in order),
        effective_qk=tuple(states[i].scores.qk for i in order),
        tie_flips=flips,
    )
    turns: list[BattleTurn] = []
    spent = False

    def standing() -> int:
        return sum(s.standing for s in states)

    while len(turns) < battle.max_turns and standing() > 1 and not spent:
        for actor in order:
            if len(turns) >= battle.max_turns or standing() <= 1:
                break
            # fairroll's bound, not the rules': a battle's reply stays a battle's size.
            if len(dice.dice) >= MAX_BATTLE_COINS:
                spent = True
                break
            if states[actor].standing:
                target = states[_next_alive(actor, order, states)]
                turns.append(_turn(len(turns) + 1, states[actor], target, dice))
    alive = [i for i, s in enumerate(states) if s.standing]
    winner = alive[0] if len(alive) == 1 else None
    loser_rewards = [] if winner is None else _rewards_of(fighters, winner, revision)
    return BattleOutcome(
        initiative=initiative,
        turns=tuple(turns),
        winner=fighters[winner].name if winner is not None else None,
        ended_by="knockout" if winner is not None else "dice_limit" if spent else "turn_cap",
        hp={s.fighter.name: s.hp for s in states},
        rewards=tuple(loser_rewards),
        winner_gold=sum(r.rewards.winner_gold for r in loser_rewards),
        winner_xp=xp_text(sum(_halves(r.rewards.winner_xp) for r in loser_rewards)),
    )


def _in_battle(fighter: Combatant, at: str, revision: Revision) -> _InBattle:
    scores = effective(fighter, at, revision=revision)
    return _InBattle(
        fighter=fighter,
        scores=scores,
        hp=current_hp(fighter),
        potions=[potion_item(p, f"{at}potions") for p in fighter.potions],
        plan=planned_spell(fighter, scores, f"{at}tactic.cast_spell"),
    )


def _rewards_of(fighters: list[Combatant], winner: int, revision: Revision) -> list[LoserReward]:
    """Each loser's rewards against the winner, and the spoils the winner takes."""
    return [
        LoserReward(
            loser=loser.name,
            rewards=rewards(
                winner_level=fighters[winner].level, loser_level=loser.level, revision=revision
            ),
            spoils=tuple(_item_name(i) for i in (loser.weapon, loser.armor) if i is not None),
        )
        for index, loser in enumerate(fighters)
        if index != winner
    ]


def _turn(number: int, me: _InBattle, foe: _InBattle, dice: DiceSource) -> BattleTurn:
    """``me`` acts on ``foe`` (the next fighter standing): a potion below the tactic's HP,
    else the planned spell, else the weapon (or a pass without one)."""
    name, tactic = me.fighter.name, me.fighter.tactic
    heal = next((p for p in me.potions if isinstance(p.effect, Heal)), None)
    if tactic.heal_below is not None and me.hp < tactic.heal_below and heal is not None:
        me.potions.remove(heal)
        me.hp = quaffed_hp(heal, me.hp, me.fighter.max_hp)
        return BattleTurn(
            number=number,
            actor=name,
            action="potion",
            target=None,
            potion=heal.name,
            actor_hp=me.hp,
            target_hp=None,
        )
    if me.plan is not None:
        cast = _spell(me.scores, foe.scores, me.plan, foe.hp, dice)
        foe.hp = cast.defender_hp
        return BattleTurn(
            number=number,
            actor=name,
            action="spell",
            target=foe.fighter.name,
            spell=cast,
            actor_hp=me.hp,
            target_hp=foe.hp,
        )
    if me.scores.af == 0:
        return BattleTurn(
            number=number, actor=name, action="pass", target=None, actor_hp=me.hp, target_hp=None
        )
    hit = _attack(me.scores, foe.scores, foe.hp, dice)
    foe.hp = hit.defender_hp
    return BattleTurn(
        number=number,
        actor=name,
        action="attack",
        target=foe.fighter.name,
        attack=hit,
        actor_hp=me.hp,
        target_hp=foe.hp,
    )


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


def _next_alive(actor: int, order: list[int], states: list[_InBattle]) -> int:
    start = order.index(actor)
    for step in range(1, len(order)):
        candidate = order[(start + step) % len(order)]
        if states[candidate].standing:
            return candidate
    return actor
