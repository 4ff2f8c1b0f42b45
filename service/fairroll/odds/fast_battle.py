"""Odds of Fast Battle System attacks and two-fighter battles.

An attack's damage is max(0, heads of AF coins - heads of FRW coins): exact, by
convolving two binomials. A battle between two fighters is a Markov chain over
(HP of each, healing potions each has drunk), fought turn by turn up to the
turn cap and fairroll's coin limit: exact while the chain's counted work stays within
``EXACT_WORK``, else an estimate (``fast_battle_estimate``): deterministic for the same
request, with its sample size and each outcome's 95 % interval, within 2 points.

>>> odds = damage_odds(af=2, frw=1)
>>> odds[0], odds[1], odds[2]
(Fraction(1, 2), Fraction(3, 8), Fraction(1, 8))
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from math import comb

import msgspec

from fairroll.odds.fast_battle_estimate import Z95, estimate_battle
from fairroll.rules.fast_battle import (
    MAX_BATTLE_COINS,
    Attack,
    Battle,
    Combatant,
    Effective,
    Initiative,
    LevelUp,
    NewCharacter,
    SpellCast,
    current_hp,
    effective,
    plan_level_up,
    planned_spell,
    potion_item,
    spell_matchup,
    starting_scores,
    unique_names,
)
from fairroll.rules.fast_battle.items import Heal, Spell

__all__ = [
    "EXACT_WORK",
    "AttackOdds",
    "BattleOdds",
    "CharacterOdds",
    "InitiativeOdds",
    "LevelUpOdds",
    "SpellOdds",
    "attack_odds",
    "battle_odds",
    "character_odds",
    "damage_odds",
    "initiative_odds",
    "level_up_odds",
    "spell_odds",
    "spell_success",
]

#: The exact chain's work (states x damage outcomes, turn by turn, each weighted by
#: 1 + bits of its numbers / ``_WORK_BITS``) past which battle odds are an estimate
#: instead; docs/rules/fast-battle.md gives the time it takes and how far it reaches.
EXACT_WORK = 250_000
_WORK_BITS = 1500


class BattleOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Who wins a battle (``wins``: each fighter, in request order) or reaches the cap.
    ``exact`` false: an estimate from ``battles`` battles, each outcome's 95 % interval in
    ``intervals`` (the fighters, then the cap), the first fighter's standard error (the
    half-width of its interval over 1.96, never 0) and the seed (hex)."""

    exact: bool
    wins: tuple[Fraction, ...]
    turn_cap: Fraction
    battles: int | None = None
    standard_error: float | None = None
    seed: str | None = None
    intervals: tuple[tuple[float, float], ...] | None = None

    @property
    def first_wins(self) -> Fraction:
        return self.wins[0]

    @property
    def second_wins(self) -> Fraction:
        return self.wins[1]


class AttackOdds(msgspec.Struct, frozen=True, kw_only=True):
    """The damage of one attack and the chance it knocks the defender out."""

    damage: dict[int, Fraction]
    knock_out: Fraction


class SpellOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the spell takes effect, and what it does to the defender."""

    takes_effect: Fraction
    damage: dict[int, Fraction]
    knock_out: Fraction


class InitiativeOdds(msgspec.Struct, frozen=True, kw_only=True):
    """For each fighter (request order), the chance of acting at each place (1 = first)."""

    places: tuple[dict[int, Fraction], ...]


class CharacterOdds(msgspec.Struct, frozen=True, kw_only=True):
    """A new character's bonus points (heads of 3 coins) and starting HP."""

    bonus_points: dict[int, Fraction]
    max_hp: dict[int, Fraction]


class LevelUpOdds(msgspec.Struct, frozen=True, kw_only=True):
    """Levels the XP brings (certain) and the max HP afterwards (the only chance part)."""

    levels_gained: int
    max_hp: dict[int, Fraction]


def binomial(n: int) -> dict[int, Fraction]:
    """Heads of ``n`` fair coins."""
    return {k: Fraction(ways, 2**n) for k, ways in enumerate(_ways(n))}


def _ways(n: int) -> Iterator[int]:
    """C(n, k) for k = 0..n, each from the one before (not n separate ``comb`` calls)."""
    ways = 1
    for k in range(n + 1):
        yield ways
        ways = ways * (n - k) // (k + 1)


def damage_odds(*, af: int, frw: int) -> dict[int, Fraction]:
    """Exact distribution of an attack's damage: max(0, Bin(af) - Bin(frw))."""
    counts: defaultdict[int, int] = defaultdict(int)
    for hits in range(af + 1):
        for blocks in range(frw + 1):
            counts[max(0, hits - blocks)] += comb(af, hits) * comb(frw, blocks)
    total = 2 ** (af + frw)
    return {damage: Fraction(n, total) for damage, n in sorted(counts.items())}


def spell_success(caster: Effective, target: Effective, spell: Spell) -> Fraction:
    """Probability that the spell is not nullified."""
    bonus = caster.ma - spell.min_ma
    ways = 0
    for heads in range(spell.sp + 1):
        for resist in range(target.frm + 1):
            if 2 * (resist + target.mr) < heads + bonus:
                ways += comb(spell.sp, heads) * comb(target.frm, resist)
    return Fraction(ways, 2 ** (spell.sp + target.frm))


def attack_odds(attack: Attack) -> AttackOdds:
    """Exact damage of ``attack`` and the chance it leaves the defender at 0 HP."""
    hitter = effective(attack.attacker, "attacker.")
    target = effective(attack.defender, "defender.")
    damage = damage_odds(af=hitter.af, frw=target.frw)
    hp = current_hp(attack.defender)
    knock_out = sum((p for d, p in damage.items() if d >= hp), Fraction(0))
    return AttackOdds(damage=damage, knock_out=knock_out)


def battle_odds(battle: Battle) -> BattleOdds:
    """Odds that each fighter wins: exact for two fighters when the chain is small enough,
    else an estimate seeded from the request (every battle of three or more fighters)."""
    if len(battle.fighters) != 2:
        return _estimate(battle)
    scores = [effective(f, f"fighters[{i}].") for i, f in enumerate(battle.fighters)]
    heals = [_heals(f, i) for i, f in enumerate(battle.fighters)]
    plans = [
        planned_spell(f, s, "tactic.cast_spell")
        for f, s in zip(battle.fighters, scores, strict=True)
    ]
    moves = [_moves(scores[i], scores[1 - i], plans[i]) for i in range(2)]
    orders = [(0, 1)] if scores[0].qk > scores[1].qk else [(1, 0)]
    if scores[0].qk == scores[1].qk:
        orders = [(0, 1), (1, 0)]  # a flip decides who goes first
    wins = [Fraction(0), Fraction(0)]
    cap = Fraction(0)
    budget = EXACT_WORK // len(orders)  # a tie is solved twice, once per first mover
    for order in orders:
        try:
            won, capped = _chain(
                battle, order, moves, heals, tie_coins=len(orders) - 1, budget=budget
            )
        except _TooLongError:
            return _estimate(battle)
        share = Fraction(1, len(orders))
        wins = [w + share * x for w, x in zip(wins, won, strict=True)]
        cap += share * capped
    return BattleOdds(exact=True, wins=(wins[0], wins[1]), turn_cap=cap)


def _heals(fighter: Combatant, index: int) -> list[int]:
    potions = [potion_item(p, f"fighters[{index}].potions") for p in fighter.potions]
    return [p.effect.amount for p in potions if isinstance(p.effect, Heal)]


def _moves(me: Effective, foe: Effective, spell: Spell | None) -> tuple[int, dict[int, int]]:
    """(flips, damage -> ways out of 2**flips) of the fighter's non-potion action."""
    if spell is not None:
        flips = spell.sp + foe.frm
        hit = int(spell_success(me, foe, spell) * 2**flips)
        dealt: defaultdict[int, int] = defaultdict(int)
        dealt[0] += 2**flips - hit
        dealt[spell.damage] += hit  # a harmless spell's success is still 0 damage
        return flips, dict(dealt)
    if me.af == 0:
        return 0, {0: 1}
    flips = me.af + foe.frw
    return flips, {d: int(p * 2**flips) for d, p in damage_odds(af=me.af, frw=foe.frw).items()}


def _chain(
    battle: Battle,
    order: tuple[int, int],
    moves: list[tuple[int, dict[int, int]]],
    heals: list[list[int]],
    *,
    tie_coins: int,
    budget: int,
) -> tuple[list[Fraction], Fraction]:
    """The battle turn by turn over (HP, potions drunk) of both, as ways out of all flips.

    A state's coins so far follow from the turn and its potions drunk (a potion flips
    none), so fairroll's coin limit ends a state exactly where ``resolve_battle`` would.
    Raises ``_TooLongError`` once its work passes ``budget`` (states x outcomes, weighted by
    the size of the numbers): counted, not timed, so the same request is always answered
    the same way.
    """
    fighters = battle.fighters
    max_hp = [f.max_hp for f in fighters]
    heal_below = [f.tactic.heal_below for f in fighters]
    flips_of = [moves[0][0], moves[1][0]]
    # State: (hp0, hp1, potions drunk 0, potions drunk 1) -> ways out of 2**scale_bits.
    states: dict[tuple[int, int, int, int], int] = {
        (current_hp(fighters[0]), current_hp(fighters[1]), 0, 0): 1
    }
    won = [0, 0]
    stopped = 0
    scale_bits = 0
    work = 0
    acts = [0, 0]
    for turn in range(battle.max_turns):
        actor = order[turn % 2]
        target = 1 - actor
        flips, damage = moves[actor]
        work += len(states) * len(damage) * (_WORK_BITS + scale_bits)
        if work > budget * _WORK_BITS:
            raise _TooLongError
        won = [ways << flips for ways in won]
        stopped <<= flips
        # Coins before this turn with no potion drunk; each potion drunk flipped none.
        most = tie_coins + acts[0] * flips_of[0] + acts[1] * flips_of[1]
        nxt: defaultdict[tuple[int, int, int, int], int] = defaultdict(int)
        for state, ways in states.items():
            hp = [state[0], state[1]]
            drunk = [state[2], state[3]]
            if (
                most >= MAX_BATTLE_COINS
                and most - drunk[0] * flips_of[0] - drunk[1] * flips_of[1] >= MAX_BATTLE_COINS
            ):  # fairroll's limit: the battle stops with no winner
                stopped += ways << flips
                continue
            below = heal_below[actor]
            if below is not None and hp[actor] < below and drunk[actor] < len(heals[actor]):
                hp[actor] = min(max_hp[actor], hp[actor] + heals[actor][drunk[actor]])
                drunk[actor] += 1
                nxt[hp[0], hp[1], drunk[0], drunk[1]] += ways << flips
                continue
            for dealt, count in damage.items():
                after = list(hp)
                after[target] = max(0, hp[target] - dealt)
                if after[target] == 0:
                    won[actor] += ways * count
                else:
                    nxt[after[0], after[1], drunk[0], drunk[1]] += ways * count
        states = nxt
        scale_bits += flips
        acts[actor] += 1
        if not states:
            break
    total = 2**scale_bits
    capped = Fraction(sum(states.values()) + stopped, total)
    return [Fraction(won[0], total), Fraction(won[1], total)], capped


class _TooLongError(Exception):
    """The exact chain passed its work budget: the battle is estimated instead."""


def _estimate(battle: Battle) -> BattleOdds:
    counted = estimate_battle(battle)
    n = counted.battles
    low, high = counted.intervals[0]
    return BattleOdds(
        exact=False,
        wins=tuple(Fraction(count, n) for count in counted.wins),
        turn_cap=Fraction(counted.turn_cap, n),
        battles=n,
        standard_error=max(high - counted.wins[0] / n, counted.wins[0] / n - low) / Z95,
        seed=counted.seed,
        intervals=counted.intervals,
    )


def spell_odds(cast: SpellCast) -> SpellOdds:
    """Exact odds of a spell: the same checks as casting it, then its flips."""
    caster, target, spell = spell_matchup(cast)
    works = spell_success(caster, target, spell)
    hp = current_hp(cast.defender)
    damage: defaultdict[int, Fraction] = defaultdict(Fraction)
    damage[0] += 1 - works
    damage[spell.damage] += works
    knock_out = works if spell.damage >= hp else Fraction(0)
    return SpellOdds(
        takes_effect=works,
        damage={d: p for d, p in sorted(damage.items()) if p},
        knock_out=knock_out,
    )


def initiative_odds(initiative: Initiative) -> InitiativeOdds:
    """Higher QK first; within a tie the coins draw a uniformly random order, so each of
    the k tied fighters holds each of their k places with probability 1/k."""
    qks = [effective(f, f"fighters[{i}].").qk for i, f in enumerate(initiative.fighters)]
    unique_names(initiative.fighters)
    places: list[dict[int, Fraction]] = []
    for qk in qks:
        ahead = sum(other > qk for other in qks)
        tied = qks.count(qk)
        places.append({ahead + i: Fraction(1, tied) for i in range(1, tied + 1)})
    return InitiativeOdds(places=tuple(places))


def character_odds(new: NewCharacter) -> CharacterOdds:
    """Bonus heads h ~ Bin(3) raise the first h of ``bonus``; HP is 5 + Bin(ST then).

    Purchases do not change the odds and are checked when the character is made.
    """
    allocated_st = starting_scores(new)["st"]
    bonus = binomial(3)
    max_hp: defaultdict[int, Fraction] = defaultdict(Fraction)
    for heads, p in bonus.items():
        st = allocated_st + new.bonus[:heads].count("st")
        for extra, q in binomial(st).items():
            max_hp[5 + extra] += p * q
    return CharacterOdds(bonus_points=bonus, max_hp=dict(sorted(max_hp.items())))


def level_up_odds(level_up: LevelUp) -> LevelUpOdds:
    """Each new level adds 3 + Bin(ST at that level) HP; the flips of all levels together
    are Bin(sum of those STs). A level-up whose flips could pass the HP limit is refused
    by ``plan_level_up``, so no outcome is capped."""
    plan = plan_level_up(level_up)
    flips = sum(st for _, _, _, st in plan.levels)
    base = plan.character.max_hp + 3 * len(plan.levels)
    max_hp = {base + heads: _dyadic(ways, flips) for heads, ways in enumerate(_ways(flips))}
    return LevelUpOdds(levels_gained=len(plan.levels), max_hp=max_hp)


def _dyadic(count: int, bits: int) -> Fraction:
    """``count / 2**bits``, its powers of two struck out first: all the reduction such a
    fraction needs, so ``Fraction``'s own gcd runs on an odd number and a power of two
    (docs/rules/fast-battle.md measures it against the unreduced pair).

    >>> _dyadic(12, 4)
    Fraction(3, 4)
    """
    if count == 0:
        return Fraction(0)
    shift = min((count & -count).bit_length() - 1, bits)
    return Fraction(count >> shift, 1 << (bits - shift))
