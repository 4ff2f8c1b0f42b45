"""The Fast Battle System, declared: characters, actions, battles, level-ups, the store."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Annotated, Any

import msgspec

from fairroll.mechanics.declare import (
    Calculation,
    DiceGroups,
    EarlierRevision,
    Mechanic,
    System,
    Words,
    faces_meta,
    plural,
)
from fairroll.odds import Distribution, Estimate, Interval, Odds, Outcome, distribution
from fairroll.odds.fast_battle import (
    attack_odds,
    battle_odds,
    character_odds,
    initiative_odds,
    level_up_odds,
    spell_odds,
)
from fairroll.odds.fast_battle_estimate import CONFIDENCE
from fairroll.randomness import DiceSource
from fairroll.rules import fast_battle as fb
from fairroll.rules.fast_battle import catalogue
from fairroll.rules.fast_battle.items import Armor, Potion, Spell, Trinket, Weapon

__all__ = ["ATTACK", "BATTLE", "CHARACTER", "INITIATIVE", "LEVEL_UP", "SPELL", "SYSTEM"]

Coins = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=2)]],
    faces_meta(2, 2000, min_dice=0, description="Coin flips in order: 2 is heads, 1 tails."),
]


class CoinFlips(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Flips made elsewhere, by group; leave out the groups a request does not flip."""

    bonus: Coins = msgspec.field(default_factory=list)
    hp: Coins = msgspec.field(default_factory=list)
    initiative: Coins = msgspec.field(default_factory=list)
    attack: Coins = msgspec.field(default_factory=list)
    armor: Coins = msgspec.field(default_factory=list)
    spell: Coins = msgspec.field(default_factory=list)
    resist: Coins = msgspec.field(default_factory=list)


def _hit_points(n: Outcome) -> str:
    return plural(int(n), "hit point")


def read_character(new: fb.NewCharacter, outcome: fb.NewCharacterOutcome) -> Words:
    c = outcome.character
    return Words(
        asked=f"Create {new.name}",
        text=(
            f"{c.name}: ST {c.st}, QK {c.qk}, IN {c.in_}, MA {c.ma}, MR {c.mr}, HP {c.max_hp}, "
            f"{plural(outcome.gold, 'gold piece')} left"
        ),
    )


def read_attack(attack: fb.Attack, outcome: fb.AttackOutcome) -> Words:
    after = " — knocked out" if outcome.knocked_out else f", {outcome.defender_hp} HP left"
    return Words(
        asked=f"{attack.attacker.name} attacks {attack.defender.name}",
        text=f"{plural(outcome.damage, 'point')} of damage{after}",
        success=outcome.damage > 0,
        victor=attack.attacker.name if outcome.knocked_out else None,
    )


def read_spell(cast: fb.SpellCast, outcome: fb.SpellOutcome) -> Words:
    spell = cast.spell if isinstance(cast.spell, str) else cast.spell.name
    if outcome.nullified:
        text = f"{outcome.spell} has no effect"
    else:
        out = " — knocked out" if outcome.knocked_out else ""
        text = f"{outcome.spell}: {plural(outcome.damage, 'point')} of damage{out}"
    return Words(
        asked=f"{cast.attacker.name} casts {spell} at {cast.defender.name}",
        text=text,
        success=not outcome.nullified,
        victor=cast.attacker.name if outcome.knocked_out else None,
    )


def read_initiative(initiative: fb.Initiative, outcome: fb.InitiativeOutcome) -> Words:
    return Words(
        asked=f"Initiative: {', '.join(f.name for f in initiative.fighters)}",
        text=f"Order: {', '.join(outcome.order)}",
    )


def read_battle(battle: fb.Battle, outcome: fb.BattleOutcome) -> Words:
    turns = plural(len(outcome.turns), "turn")
    text = f"{outcome.winner} wins after {turns}" if outcome.winner else f"No winner after {turns}"
    return Words(
        asked=f"Battle: {' against '.join(f.name for f in battle.fighters)}",
        text=text,
        victor=outcome.winner,
    )


def read_level_up(level_up: fb.LevelUp, outcome: fb.LevelUpOutcome) -> Words:
    sheet = level_up.character
    return Words(
        asked=f"Level up {sheet.name} ({sheet.xp} XP + {level_up.xp_gained})",
        text=f"Level {outcome.character.level}, {outcome.character.xp} XP left",
    )


def odds_of_character(new: fb.NewCharacter) -> list[Distribution]:
    odds = character_odds(new)
    return [
        distribution(
            "bonus_points",
            "Bonus points (heads of 3 coins)",
            odds.bonus_points,
            label=lambda n: plural(int(n), "point"),
        ),
        distribution("max_hp", "Starting HP", odds.max_hp, label=lambda n: f"{n} HP"),
    ]


def _knock_out(p: Fraction) -> Distribution:
    return distribution(
        "knock_out",
        "Knock-out",
        {"knocked_out": p, "standing": 1 - p},
        label=lambda k: "Knocked out" if k == "knocked_out" else "Still standing",
    )


def odds_of_attack(attack: fb.Attack) -> list[Distribution]:
    odds = attack_odds(attack)
    title = f"Damage to {attack.defender.name}"
    return [
        distribution("damage", title, odds.damage, label=_hit_points),
        _knock_out(odds.knock_out),
    ]


def odds_of_spell(cast: fb.SpellCast) -> list[Distribution]:
    odds = spell_odds(cast)
    works = odds.takes_effect
    return [
        distribution(
            "takes_effect",
            "The spell",
            {"takes_effect": works, "no_effect": 1 - works},
            label=lambda k: "Takes effect" if k == "takes_effect" else "Has no effect",
        ),
        distribution("damage", f"Damage to {cast.defender.name}", odds.damage, label=_hit_points),
        _knock_out(odds.knock_out),
    ]


def odds_of_initiative(initiative: fb.Initiative) -> list[Distribution]:
    odds = initiative_odds(initiative)
    every = list(zip(initiative.fighters, odds.places, strict=True))
    first = {f.name: places.get(1, Fraction(0)) for f, places in every}
    return [
        distribution("first", "Acts first", first),
        *(
            distribution(
                f"fighters[{i}].place",
                f"{fighter.name}: place in the order",
                places,
                label=lambda n: f"Place {n}",
            )
            for i, (fighter, places) in enumerate(every)
        ),
    ]


def odds_of_battle(battle: fb.Battle) -> Odds:
    """Exact odds when the chain solves the battle in its budget; else an estimate whose
    title gives its sample size and precision and whose labels give each 95 % interval
    (the probabilities are then counts of battles, not exact chances)."""
    odds = battle_odds(battle)
    chances: dict[Outcome, Fraction] = {
        f.name: p for f, p in zip(battle.fighters, odds.wins, strict=True)
    }
    chances[""] = odds.turn_cap

    def said(k: Outcome) -> str:
        return f"{k} wins" if k else "Turn limit reached"

    if odds.exact or odds.battles is None or odds.seed is None or odds.intervals is None:
        return Odds(
            mechanic=BATTLE.name,
            distributions=[distribution("winner", "Who wins (exact)", chances, label=said)],
        )
    interval = dict(zip(chances, odds.intervals, strict=True))
    widest = max(
        max(high - float(p), float(p) - low)
        for p, (low, high) in zip(chances.values(), odds.intervals, strict=True)
    )

    def estimated(k: Outcome) -> str:
        low, high = interval[k]
        return f"{said(k)} (95 % interval {100 * low:.1f} to {100 * high:.1f} %)"

    title = (
        f"Who wins (estimated from {odds.battles:,} battles seeded from this request; "
        f"each chance within ±{100 * widest:.1f} points at 95 %)"
    )
    return Odds(
        mechanic=BATTLE.name,
        exact=False,
        estimate=Estimate(
            battles=odds.battles,
            seed=odds.seed,
            confidence=CONFIDENCE,
            intervals=[
                Interval(distribution="winner", outcome=k, low=low, high=high)
                for k, (low, high) in interval.items()
            ],
            standard_error=odds.standard_error or 0.0,
        ),
        distributions=[distribution("winner", title, chances, label=estimated)],
    )


def odds_of_level_up(level_up: fb.LevelUp) -> list[Distribution]:
    odds = level_up_odds(level_up)
    title = (
        f"Max HP after {plural(odds.levels_gained, 'level')}"
        if odds.levels_gained
        else "No level gained: max HP stays"
    )
    return [distribution("max_hp", title, odds.max_hp, label=lambda n: f"{n} HP")]


def first_revision(resolve: Callable[..., Any]) -> tuple[EarlierRevision[Any], ...]:
    """A mechanic's earlier revisions: the first (``fb.FIRST``), the same rules function
    told to decide as the first revision did."""
    said = (
        "the first revision: a new character's weapon of any kind or none, and numbers "
        f"cut to fit (max HP at {fb.MAX_HP}, a loser's gold and armour-reduced QK and MA at 0)"
    )
    first: Callable[[Any, DiceSource], Any] = partial(resolve, revision=fb.FIRST)
    return (EarlierRevision(name=said, resolve=first),)


CHARACTER: Mechanic[fb.NewCharacter, fb.NewCharacterOutcome] = Mechanic(
    name="fast-battle.character",
    path="/characters",
    operation_id="createFastBattleCharacter",
    summary="Create a character: bonus flips, HP flips, 5 gold and purchases",
    input_type=fb.NewCharacter,
    dice_type=CoinFlips,
    resolve=fb.resolve_new_character,
    earlier=first_revision(fb.resolve_new_character),
    read=read_character,
    odds=odds_of_character,
    odds_operation_id="fastBattleCharacterOdds",
    odds_summary="Exact odds of a new character's bonus points and HP",
)
ATTACK: Mechanic[fb.Attack, fb.AttackOutcome] = Mechanic(
    name="fast-battle.attack",
    path="/attacks",
    operation_id="rollFastBattleAttack",
    summary="A weapon attack: AF flips minus the defender's FRW flips",
    input_type=fb.Attack,
    dice_type=CoinFlips,
    resolve=fb.resolve_attack,
    earlier=first_revision(fb.resolve_attack),
    read=read_attack,
    odds=odds_of_attack,
    odds_operation_id="fastBattleAttackOdds",
    odds_summary="Exact damage distribution of an attack",
)
SPELL: Mechanic[fb.SpellCast, fb.SpellOutcome] = Mechanic(
    name="fast-battle.spell",
    path="/spells",
    operation_id="castFastBattleSpell",
    summary="Cast a spell: SP flips plus MA above the minimum against FRM flips plus MR",
    input_type=fb.SpellCast,
    dice_type=CoinFlips,
    resolve=fb.resolve_spell,
    earlier=first_revision(fb.resolve_spell),
    read=read_spell,
    odds=odds_of_spell,
    odds_operation_id="fastBattleSpellOdds",
    odds_summary="Exact odds that a spell takes effect, and its damage",
)
INITIATIVE: Mechanic[fb.Initiative, fb.InitiativeOutcome] = Mechanic(
    name="fast-battle.initiative",
    path="/initiatives",
    operation_id="rollFastBattleInitiative",
    summary="Who acts first: higher effective QK, ties flipped",
    input_type=fb.Initiative,
    dice_type=CoinFlips,
    resolve=fb.resolve_initiative,
    earlier=first_revision(fb.resolve_initiative),
    read=read_initiative,
    odds=odds_of_initiative,
    odds_operation_id="fastBattleInitiativeOdds",
    odds_summary="Exact odds of each fighter's place in the order",
)
BATTLE: Mechanic[fb.Battle, fb.BattleOutcome] = Mechanic(
    name="fast-battle.battle",
    path="/battles",
    operation_id="fightFastBattle",
    summary="Fight a whole battle turn by turn, with the rewards that follow",
    input_type=fb.Battle,
    dice_type=CoinFlips,
    resolve=fb.resolve_battle,
    earlier=first_revision(fb.resolve_battle),
    read=read_battle,
    odds=odds_of_battle,
    odds_operation_id="fastBattleOdds",
    odds_summary="Who wins a battle: exact when the chain allows, else a precise estimate",
    odds_description=(
        "Exact (a chain over both fighters' HP and potions, turn by turn) for two fighters "
        "when it fits its work budget; otherwise estimated by battles fought by the rules "
        "with coins seeded from the request (the same request, the same answer), until every "
        "outcome's 95 % interval is within 2 points (at most 2,401 battles). An estimate "
        "says so: exact false, its battles and seed, and each interval in the labels."
    ),
)
LEVEL_UP: Mechanic[fb.LevelUp, fb.LevelUpOutcome] = Mechanic(
    name="fast-battle.level-up",
    path="/level-ups",
    operation_id="levelUpFastBattleCharacter",
    summary="Add XP and level up at every 3 XP: IN points, +3 HP and ST flips",
    input_type=fb.LevelUp,
    dice_type=CoinFlips,
    resolve=fb.resolve_level_up,
    earlier=first_revision(fb.resolve_level_up),
    read=read_level_up,
    odds=odds_of_level_up,
    odds_operation_id="fastBattleLevelUpOdds",
    odds_summary="Exact odds of the max HP after a level-up",
)


class Store(msgspec.Struct, frozen=True, kw_only=True):
    """fairroll's own default store: not the seed's, except the sample character's sword,
    robe and potion. Every price is fairroll's."""

    notice: str
    weapons: list[Weapon]
    armor: list[Armor]
    potions: list[Potion]
    trinkets: list[Trinket]
    spells: list[Spell]


STORE = Store(
    notice=(
        "fairroll's own catalogue, not the Fast Battle System text: only the Standard Issue "
        "Sword, Light Robe and Potion of Cure Light Wounds come from the rules' sample "
        "character, and all prices are fairroll's."
    ),
    weapons=list(catalogue.WEAPONS.values()),
    armor=list(catalogue.ARMORS.values()),
    potions=list(catalogue.POTIONS.values()),
    trinkets=list(catalogue.TRINKETS.values()),
    spells=list(catalogue.SPELLS.values()),
)


def store() -> Store:
    return STORE


def rewards(given: fb.RewardsInput) -> fb.Rewards:
    return fb.rewards(winner_level=given.winner_level, loser_level=given.loser_level)


SYSTEM = System(
    slug="fast-battle",
    title="Fast Battle System",
    description="The Fast Battle System (John Floren, 2005).",
    source="seeds/003",
    mechanics=(CHARACTER, ATTACK, SPELL, INITIATIVE, BATTLE, LEVEL_UP),
    calculations=(
        Calculation(
            path="/potions",
            operation_id="quaffFastBattlePotion",
            summary="Quaff a potion (no flips: it does what it says)",
            compute=fb.quaff,
        ),
        Calculation(
            path="/rewards",
            operation_id="fastBattleRewards",
            summary="Gold and XP after a battle, from the winner's and loser's levels",
            compute=rewards,
        ),
        Calculation(
            path="/store",
            operation_id="getFastBattleStore",
            summary="fairroll's default store (its own, not the seed's)",
            compute=store,
            method="GET",
        ),
    ),
)
