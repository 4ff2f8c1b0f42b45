"""The registry of resolution mechanics: name, input type and rules function.

The HTTP layer rolls through it, and the verifier replays recorded entries
through it, so an audited outcome is checked against the same rules code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, get_type_hints

import msgspec

from fairroll.randomness import DiceSource, SeededDice, SuppliedDice
from fairroll.rules import fast_battle, fbc, stat_skill, tft, tribute

__all__ = [
    "FAST_BATTLE_ATTACK",
    "FAST_BATTLE_BATTLE",
    "FAST_BATTLE_CHARACTER",
    "FAST_BATTLE_INITIATIVE",
    "FAST_BATTLE_LEVEL_UP",
    "FAST_BATTLE_SPELL",
    "FBC_CONFLICT",
    "FBC_ROLL",
    "MECHANICS",
    "STAT_SKILL_CHECK",
    "STAT_SKILL_COMPLEX",
    "STAT_SKILL_CONTEST",
    "TFT_CONTEST",
    "TRIBUTE_TEST",
    "Mechanic",
    "replay_entry",
]

InputT = TypeVar("InputT", bound=msgspec.Struct)
OutcomeT = TypeVar("OutcomeT", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Mechanic(Generic[InputT, OutcomeT]):
    """One resolution mechanic: ``resolve(input, dice)`` gives the outcome."""

    name: str
    input_type: type[InputT]
    resolve: Callable[[InputT, DiceSource], OutcomeT]

    @property
    def outcome_type(self) -> type[OutcomeT]:
        """The outcome struct, from the rules function's return annotation."""
        kind: type[OutcomeT] = get_type_hints(self.resolve)["return"]
        return kind

    def input_of(self, request: object) -> InputT:
        """The mechanic's own fields of an HTTP request (a subclass of the input type)."""
        fields = self.input_type.__struct_fields__
        return self.input_type(**{name: getattr(request, name) for name in fields})


TFT_CONTEST: Mechanic[tft.Contest, tft.ContestOutcome] = Mechanic(
    "tft.contest", tft.Contest, tft.resolve_contest
)

FBC_ROLL: Mechanic[fbc.Roll, fbc.RollOutcome] = Mechanic("fbc.roll", fbc.Roll, fbc.resolve_roll)
FBC_CONFLICT: Mechanic[fbc.Conflict, fbc.ConflictOutcome] = Mechanic(
    "fbc.conflict", fbc.Conflict, fbc.resolve_conflict
)

TRIBUTE_TEST: Mechanic[tribute.Test, tribute.TestOutcome] = Mechanic(
    "tribute.test", tribute.Test, tribute.resolve_test
)

STAT_SKILL_CHECK: Mechanic[stat_skill.Check, stat_skill.CheckOutcome] = Mechanic(
    "stat-skill.check", stat_skill.Check, stat_skill.resolve_check
)
STAT_SKILL_CONTEST: Mechanic[stat_skill.ContestedCheck, stat_skill.ContestedOutcome] = Mechanic(
    "stat-skill.contest", stat_skill.ContestedCheck, stat_skill.resolve_contest
)
STAT_SKILL_COMPLEX: Mechanic[stat_skill.ComplexCheck, stat_skill.ComplexOutcome] = Mechanic(
    "stat-skill.complex-check", stat_skill.ComplexCheck, stat_skill.resolve_complex_check
)

FAST_BATTLE_CHARACTER: Mechanic[fast_battle.NewCharacter, fast_battle.NewCharacterOutcome] = (
    Mechanic("fast-battle.character", fast_battle.NewCharacter, fast_battle.resolve_new_character)
)
FAST_BATTLE_ATTACK: Mechanic[fast_battle.Attack, fast_battle.AttackOutcome] = Mechanic(
    "fast-battle.attack", fast_battle.Attack, fast_battle.resolve_attack
)
FAST_BATTLE_SPELL: Mechanic[fast_battle.SpellCast, fast_battle.SpellOutcome] = Mechanic(
    "fast-battle.spell", fast_battle.SpellCast, fast_battle.resolve_spell
)
FAST_BATTLE_INITIATIVE: Mechanic[fast_battle.Initiative, fast_battle.InitiativeOutcome] = Mechanic(
    "fast-battle.initiative", fast_battle.Initiative, fast_battle.resolve_initiative
)
FAST_BATTLE_BATTLE: Mechanic[fast_battle.Battle, fast_battle.BattleOutcome] = Mechanic(
    "fast-battle.battle", fast_battle.Battle, fast_battle.resolve_battle
)
FAST_BATTLE_LEVEL_UP: Mechanic[fast_battle.LevelUp, fast_battle.LevelUpOutcome] = Mechanic(
    "fast-battle.level-up", fast_battle.LevelUp, fast_battle.resolve_level_up
)

MECHANICS: Mapping[str, Mechanic[Any, Any]] = {
    m.name: m
    for m in (
        TFT_CONTEST,
        FBC_ROLL,
        FBC_CONFLICT,
        TRIBUTE_TEST,
        STAT_SKILL_CHECK,
        STAT_SKILL_CONTEST,
        STAT_SKILL_COMPLEX,
        FAST_BATTLE_CHARACTER,
        FAST_BATTLE_ATTACK,
        FAST_BATTLE_SPELL,
        FAST_BATTLE_INITIATIVE,
        FAST_BATTLE_BATTLE,
        FAST_BATTLE_LEVEL_UP,
    )
}


def replay_entry(entry: dict[str, Any], seed: str | None = None) -> tuple[Any, Any]:
    """Re-resolve a recorded entry from its request and its seed, or its recorded dice when
    ``seed`` is None; return (dice, outcome) as JSON."""
    mechanic = MECHANICS.get(entry["mechanic"])
    if mechanic is None:
        raise ValueError(f"unknown mechanic {entry['mechanic']!r}")
    request = msgspec.convert(entry["request"], mechanic.input_type)
    source: SeededDice | SuppliedDice
    if seed is not None:
        source = SeededDice(seed)
    else:
        grouped: dict[str, list[int]] = {}
        for die in entry["dice"]:
            grouped.setdefault(die["group"], []).append(die["face"])
        source = SuppliedDice(grouped)
    outcome = mechanic.resolve(request, source)
    if isinstance(source, SuppliedDice):
        source.check_all_used()
    return msgspec.to_builtins(source.dice), msgspec.to_builtins(outcome)
