"""Levelling up: every 3 XP a level, IN new points, +3 HP and a flip per ST."""

from __future__ import annotations

from typing import Annotated

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.fast_battle.sheet import (
    CURRENT,
    MAX_HP,
    MAX_LEVEL,
    MAX_SCORE,
    Attribute,
    Revision,
    Sheet,
    XpText,
    _flip,
    _halves,
    xp_text,
)


class LevelUp(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """XP gained is added; every 3 XP is a level: IN new points (``assign``, in order,
    across all levels gained), +3 HP and one flip per ST for extra HP."""

    character: Sheet
    xp_gained: Annotated[XpText, msgspec.Meta(title="XP gained")] = "0"
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


def plan_level_up(level_up: LevelUp, *, revision: Revision = CURRENT) -> LevelPlan:
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
    # "At each new level the character gains 3 more HP and flips equal to his ST": every
    # outcome of those flips must fit the sheet's limit, which is fairroll's, not the
    # rules'; a level-up that could pass it is refused before a coin, never cut short (the
    # first revision cut it at the limit instead, ``resolve_level_up``).
    most = sheet.max_hp + sum(3 + st for _, _, _, st in levels)
    if most > MAX_HP and not revision.cut_to_fit:
        raise RuleError(
            f"the level-up could bring {sheet.name}'s max HP to {most} (3 a level plus a "
            f"flip per ST), past {MAX_HP}, fairroll's limit on a sheet (the rules set none; "
            "it bounds a battle's odds)",
            field="character.max_hp",
        )
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


def resolve_level_up(
    level_up: LevelUp, dice: DiceSource, *, revision: Revision = CURRENT
) -> LevelUpOutcome:
    """Level up while XP >= 3 (group ``hp``: one flip per ST at each new level)."""
    plan = plan_level_up(level_up, revision=revision)
    max_hp = plan.character.max_hp
    gained: list[LevelGained] = []
    for level, points, assigned, st in plan.levels:
        flips, heads = _flip(dice, "hp", st)
        max_hp += 3 + heads
        if revision.cut_to_fit:  # gains are never negative: capping each level caps the total
            max_hp = min(MAX_HP, max_hp)
        gained.append(
            LevelGained(
                level=level, points=points, assigned=assigned, hp_flips=flips, hp_gained=3 + heads
            )
        )
    character = msgspec.structs.replace(plan.character, max_hp=max_hp)
    return LevelUpOutcome(levels=tuple(gained), character=character)
