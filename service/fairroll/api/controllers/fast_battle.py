"""The Fast Battle System: characters, actions, battles, rewards, level-ups, odds, store."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

import msgspec
from litestar import Controller, get, post
from msgspec import UNSET, UnsetType

from fairroll.api.envelope import (
    ROLL_BODY,
    CountOdds,
    Probability,
    RollResponse,
    Seed,
    SessionRef,
    TableName,
    counts_of,
    faces_meta,
    probability_of,
)
from fairroll.api.problems import CALC_ERRORS, ROLL_ERRORS
from fairroll.api.rolls import Roller
from fairroll.mechanics import (
    FAST_BATTLE_ATTACK,
    FAST_BATTLE_BATTLE,
    FAST_BATTLE_CHARACTER,
    FAST_BATTLE_INITIATIVE,
    FAST_BATTLE_LEVEL_UP,
    FAST_BATTLE_SPELL,
)
from fairroll.odds.fast_battle import (
    battle_odds,
    character_odds,
    damage_odds,
    initiative_odds,
    level_up_odds,
    spell_odds,
)
from fairroll.rules import fast_battle as fb
from fairroll.rules import fast_battle_catalogue as store
from fairroll.rules.fast_battle_items import Armor, Potion, Spell, Trinket, Weapon

__all__ = ["FastBattleController"]

Coins = Annotated[
    list[Annotated[int, msgspec.Meta(ge=1, le=2)]],
    faces_meta(2, 2000, min_dice=0, description="Coin flips in order: 2 is heads, 1 tails."),
]


class CoinFlips(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Flips made elsewhere, by group; leave out the groups a request does not flip."""

    bonus: Coins = msgspec.field(default_factory=list)
    hp: Coins = msgspec.field(default_factory=list)
    initiative: Coins = msgspec.field(default_factory=list)
    attack: Coins = msgspec.field(default_factory=list)
    armor: Coins = msgspec.field(default_factory=list)
    spell: Coins = msgspec.field(default_factory=list)
    resist: Coins = msgspec.field(default_factory=list)

    def groups(self) -> dict[str, list[int]]:
        return msgspec.structs.asdict(self)


class CharacterRequest(fb.NewCharacter, frozen=True, kw_only=True, forbid_unknown_fields=True):
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CoinFlips | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class CharacterResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fb.NewCharacterOutcome


class AttackRequest(fb.Attack, frozen=True, kw_only=True, forbid_unknown_fields=True):
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CoinFlips | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class AttackResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fb.AttackOutcome


class SpellRequest(fb.SpellCast, frozen=True, kw_only=True, forbid_unknown_fields=True):
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CoinFlips | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class SpellResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fb.SpellOutcome


class InitiativeRequest(fb.Initiative, frozen=True, kw_only=True, forbid_unknown_fields=True):
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CoinFlips | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class InitiativeResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fb.InitiativeOutcome


class BattleRequest(fb.Battle, frozen=True, kw_only=True, forbid_unknown_fields=True):
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CoinFlips | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class BattleResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fb.BattleOutcome


class LevelUpRequest(fb.LevelUp, frozen=True, kw_only=True, forbid_unknown_fields=True):
    table: TableName = "default"
    seed: Seed | UnsetType = UNSET
    dice: CoinFlips | UnsetType = UNSET
    session: SessionRef | UnsetType = UNSET


class LevelUpResponse(RollResponse, frozen=True, kw_only=True):
    outcome: fb.LevelUpOutcome


class AttackOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Exact damage distribution of one attack, and the chance it knocks the defender out."""

    damage: list[CountOdds]
    knock_out: Probability


class SpellOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the spell takes effect, its damage distribution, and a knock-out."""

    takes_effect: Probability
    damage: list[CountOdds]
    knock_out: Probability


class FighterPlaces(msgspec.Struct, frozen=True, kw_only=True):
    """One fighter's chance of acting at each place (``value`` 1 acts first)."""

    name: str
    places: list[CountOdds]


class InitiativeOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Each fighter, in request order, with the odds of each place in the order."""

    fighters: list[FighterPlaces]


class CharacterOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """A new character's bonus points (heads of 3 coins) and starting HP."""

    bonus_points: list[CountOdds]
    max_hp: list[CountOdds]


class LevelUpOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """The levels the XP brings (certain) and the max HP afterwards."""

    levels_gained: int
    max_hp: list[CountOdds]


class BattleOddsResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Who wins a two-fighter battle (request order). ``exact`` false: an estimate from
    ``battles`` seeded battles, with its standard error."""

    exact: bool
    first_wins: Probability
    second_wins: Probability
    turn_cap: Probability
    battles: int | None
    standard_error: float | None
    seed: str | None


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
    weapons=list(store.WEAPONS.values()),
    armor=list(store.ARMORS.values()),
    potions=list(store.POTIONS.values()),
    trinkets=list(store.TRINKETS.values()),
    spells=list(store.SPELLS.values()),
)


class FastBattleController(Controller):
    path = "/v1/fast-battle"
    tags = ("fast-battle",)

    @post(
        "/characters",
        operation_id="createFastBattleCharacter",
        summary="Create a character: bonus flips, HP flips, 5 gold and purchases",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def character(
        self, data: Annotated[CharacterRequest, ROLL_BODY], roller: Roller
    ) -> CharacterResponse:
        rolled = await roller.roll(FAST_BATTLE_CHARACTER, data)
        return CharacterResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/attacks",
        operation_id="rollFastBattleAttack",
        summary="A weapon attack: AF flips minus the defender's FRW flips",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def attack(
        self, data: Annotated[AttackRequest, ROLL_BODY], roller: Roller
    ) -> AttackResponse:
        rolled = await roller.roll(FAST_BATTLE_ATTACK, data)
        return AttackResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/spells",
        operation_id="castFastBattleSpell",
        summary="Cast a spell: SP flips plus MA above the minimum against FRM flips plus MR",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def spell(
        self, data: Annotated[SpellRequest, ROLL_BODY], roller: Roller
    ) -> SpellResponse:
        rolled = await roller.roll(FAST_BATTLE_SPELL, data)
        return SpellResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/initiatives",
        operation_id="rollFastBattleInitiative",
        summary="Who acts first: higher effective QK, ties flipped",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def initiative(
        self, data: Annotated[InitiativeRequest, ROLL_BODY], roller: Roller
    ) -> InitiativeResponse:
        rolled = await roller.roll(FAST_BATTLE_INITIATIVE, data)
        return InitiativeResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/potions",
        operation_id="quaffFastBattlePotion",
        summary="Quaff a potion (no flips: it does what it says)",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def potion(self, data: fb.Quaff) -> fb.QuaffOutcome:
        return fb.quaff(data)

    @post(
        "/battles",
        operation_id="fightFastBattle",
        summary="Fight a whole battle turn by turn, with the rewards that follow",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def battle(
        self, data: Annotated[BattleRequest, ROLL_BODY], roller: Roller
    ) -> BattleResponse:
        rolled = await roller.roll(FAST_BATTLE_BATTLE, data)
        return BattleResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/rewards",
        operation_id="fastBattleRewards",
        summary="Gold and XP after a battle, from the winner's and loser's levels",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def rewards(self, data: fb.RewardsInput) -> fb.Rewards:
        return fb.rewards(winner_level=data.winner_level, loser_level=data.loser_level)

    @post(
        "/level-ups",
        operation_id="levelUpFastBattleCharacter",
        summary="Add XP and level up at every 3 XP: IN points, +3 HP and ST flips",
        status_code=200,
        responses=ROLL_ERRORS,
    )
    async def level_up(
        self, data: Annotated[LevelUpRequest, ROLL_BODY], roller: Roller
    ) -> LevelUpResponse:
        rolled = await roller.roll(FAST_BATTLE_LEVEL_UP, data)
        return LevelUpResponse(**rolled.envelope(), outcome=rolled.outcome)

    @post(
        "/attacks/odds",
        operation_id="fastBattleAttackOdds",
        summary="Exact damage distribution of an attack",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def attack_odds(self, data: fb.Attack) -> AttackOddsResponse:
        hitter = fb.effective(data.attacker, "attacker.")
        target = fb.effective(data.defender, "defender.")
        damage = damage_odds(af=hitter.af, frw=target.frw)
        hp = fb.current_hp(data.defender)
        knock_out = sum((p for d, p in damage.items() if d >= hp), Fraction(0))
        return AttackOddsResponse(damage=counts_of(damage), knock_out=probability_of(knock_out))

    @post(
        "/spells/odds",
        operation_id="fastBattleSpellOdds",
        summary="Exact odds that a spell takes effect, and its damage",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def spell_odds(self, data: fb.SpellCast) -> SpellOddsResponse:
        odds = spell_odds(data)
        return SpellOddsResponse(
            takes_effect=probability_of(odds.takes_effect),
            damage=counts_of(odds.damage),
            knock_out=probability_of(odds.knock_out),
        )

    @post(
        "/initiatives/odds",
        operation_id="fastBattleInitiativeOdds",
        summary="Exact odds of each fighter's place in the order",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def initiative_odds(self, data: fb.Initiative) -> InitiativeOddsResponse:
        odds = initiative_odds(data)
        return InitiativeOddsResponse(
            fighters=[
                FighterPlaces(name=fighter.name, places=counts_of(places))
                for fighter, places in zip(data.fighters, odds.places, strict=True)
            ]
        )

    @post(
        "/characters/odds",
        operation_id="fastBattleCharacterOdds",
        summary="Exact odds of a new character's bonus points and HP",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def character_odds(self, data: fb.NewCharacter) -> CharacterOddsResponse:
        odds = character_odds(data)
        return CharacterOddsResponse(
            bonus_points=counts_of(odds.bonus_points), max_hp=counts_of(odds.max_hp)
        )

    @post(
        "/level-ups/odds",
        operation_id="fastBattleLevelUpOdds",
        summary="Exact odds of the max HP after a level-up",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def level_up_odds(self, data: fb.LevelUp) -> LevelUpOddsResponse:
        odds = level_up_odds(data)
        return LevelUpOddsResponse(levels_gained=odds.levels_gained, max_hp=counts_of(odds.max_hp))

    @post(
        "/battles/odds",
        operation_id="fastBattleOdds",
        summary="Who wins a two-fighter battle: exact, or a seeded estimate",
        status_code=200,
        responses=CALC_ERRORS,
    )
    async def battle_odds(self, data: fb.Duel) -> BattleOddsResponse:
        odds = battle_odds(data)
        return BattleOddsResponse(
            exact=odds.exact,
            first_wins=probability_of(odds.first_wins),
            second_wins=probability_of(odds.second_wins),
            turn_cap=probability_of(odds.turn_cap),
            battles=odds.battles,
            standard_error=odds.standard_error,
            seed=odds.seed,
        )

    @get(
        "/store",
        operation_id="getFastBattleStore",
        summary="fairroll's default store (its own, not the seed's)",
    )
    async def store(self) -> Store:
        return STORE
