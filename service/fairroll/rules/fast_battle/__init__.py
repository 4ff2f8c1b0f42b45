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

from fairroll.rules.fast_battle.actions import (
    Attack,
    AttackOutcome,
    Initiative,
    InitiativeOutcome,
    Quaff,
    QuaffOutcome,
    SpellCast,
    SpellOutcome,
    initiative_order,
    quaff,
    quaffed_hp,
    resolve_attack,
    resolve_initiative,
    resolve_spell,
    spell_matchup,
)
from fairroll.rules.fast_battle.battle import (
    Battle,
    BattleOutcome,
    BattleTurn,
    Combatant,
    Rewards,
    RewardsInput,
    Tactic,
    planned_spell,
    resolve_battle,
    rewards,
)
from fairroll.rules.fast_battle.creation import (
    Allocation,
    NewCharacter,
    NewCharacterOutcome,
    resolve_new_character,
    starting_scores,
)
from fairroll.rules.fast_battle.levels import (
    LevelPlan,
    LevelUp,
    LevelUpOutcome,
    plan_level_up,
    resolve_level_up,
)
from fairroll.rules.fast_battle.sheet import (
    CURRENT,
    FIRST,
    HEADS,
    MAX_BATTLE_COINS,
    MAX_HP,
    MAX_LEVEL,
    MAX_SCORE,
    Effective,
    Fighter,
    Revision,
    Sheet,
    current_hp,
    effective,
    potion_item,
    unique_names,
    xp_text,
)

__all__ = [
    "CURRENT",
    "FIRST",
    "HEADS",
    "MAX_BATTLE_COINS",
    "MAX_HP",
    "MAX_LEVEL",
    "MAX_SCORE",
    "Allocation",
    "Attack",
    "AttackOutcome",
    "Battle",
    "BattleOutcome",
    "BattleTurn",
    "Combatant",
    "Effective",
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
    "Revision",
    "Rewards",
    "RewardsInput",
    "Sheet",
    "SpellCast",
    "SpellOutcome",
    "Tactic",
    "current_hp",
    "effective",
    "initiative_order",
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
