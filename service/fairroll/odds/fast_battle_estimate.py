"""Seeded estimates of who wins a Fast Battle System battle, to a stated precision.

A battle the exact chain cannot solve in its budget (every battle of three or more
fighters, and two-fighter battles with large HP or many turns) is estimated by fighting
it many times by the rules and counting winners. An estimate a GM can rely on is:

- **deterministic for the same request**: the coins come from Python's
  ``random.Random`` seeded with SHA-256 of ``fairroll-battle-odds/2``, a newline and the
  request as decoded (msgspec's JSON of the ``Battle``), and the number of battles
  depends only on what those coins give, never on a clock; the same request gets the
  same answer on any machine.
- **of a stated precision**: battles are fought in rounds of ``ROUND`` until the 95 %
  Wilson score interval of every outcome (each fighter wins, the turn limit) is within
  ``PRECISION`` of its estimate, or ``MAX_BATTLES`` are fought, the number at which
  that holds whatever the chances (a chance of one half needs the most); so every
  answer is within 2 points at 95 %.
- **fought by the rules**: :func:`fight` follows ``resolve_battle`` turn for turn
  (initiative by the same ``initiative_order``, potions, spells, attacks, the turn cap and
  fairroll's coin limit), drawing coins as bits rather than as logged dice;
  ``tests/test_fast_battle.py`` fights both on the same logged coins and requires the
  same winner every time.

>>> wilson(0, 100)[1] < 0.04 < wilson(50, 100)[1] - wilson(50, 100)[0]
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from typing import Protocol

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.fast_battle import (
    MAX_BATTLE_COINS,
    Battle,
    current_hp,
    effective,
    initiative_order,
    planned_spell,
    potion_item,
    unique_names,
)
from fairroll.rules.fast_battle.items import Heal

__all__ = [
    "CONFIDENCE",
    "MAX_BATTLES",
    "PRECISION",
    "ROUND",
    "Coins",
    "Estimated",
    "Setup",
    "estimate_battle",
    "fight",
    "prepare",
    "request_seed",
    "wilson",
]

#: The half-width of the 95 % interval every estimated chance reaches (2 points).
PRECISION = 0.02
#: The confidence level of every interval, and the normal quantile it takes.
CONFIDENCE = 0.95
Z95 = 1.959963984540054
#: Enough battles for ``PRECISION`` at any chance (one half is the worst): 2,401.
MAX_BATTLES = math.ceil(Z95**2 * 0.25 / PRECISION**2)
#: Battles fought between two looks at the intervals.
ROUND = 100
SEED_PREFIX = b"fairroll-battle-odds/2\n"

_PASS, _ATTACK, _SPELL = 0, 1, 2


class Estimated(msgspec.Struct, frozen=True, kw_only=True):
    """Counts of ``battles`` fought: ``wins`` per fighter (request order), ``turn_cap``
    (no winner: the turn or coin limit), each with its 95 % interval, and the seed."""

    battles: int
    wins: tuple[int, ...]
    turn_cap: int
    intervals: tuple[tuple[float, float], ...]
    seed: str


class Coins(Protocol):
    """Where a battle's coins come from: heads of ``n`` flips of a group, the coins
    flipped so far, and ``roll`` (faces, for the initiative draw)."""

    flipped: int

    def heads(self, group: str, n: int) -> int: ...

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]: ...


class FastCoins:
    """Coins as the bits of a seeded ``random.Random``: bit set is heads."""

    def __init__(self, rng: random.Random) -> None:
        self._bits = rng.getrandbits
        self.flipped = 0

    def heads(self, group: str, n: int) -> int:
        if n == 0:
            return 0
        self.flipped += n
        return self._bits(n).bit_count()

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        bits = self._bits(count) if count else 0
        self.flipped += count
        return tuple(2 if bits >> i & 1 else 1 for i in range(count))


class LoggedCoins:
    """Coins from a dice source, as ``resolve_battle`` flips them (for the tests)."""

    def __init__(self, dice: DiceSource) -> None:
        self._dice = dice

    @property
    def flipped(self) -> int:
        return len(self._dice.dice)

    def heads(self, group: str, n: int) -> int:
        return sum(face == 2 for face in self._dice.roll(group, 2, n)) if n else 0

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        return self._dice.roll(group, sides, count)


@dataclasses.dataclass(slots=True)
class _Side:
    """One fighter reduced to what a battle reads: HP, heals, its action and defences."""

    hp: int
    max_hp: int
    heal_below: int
    heals: list[int]
    action: int
    af: int
    sp: int
    bonus: int
    damage: int
    frw: int
    frm: int
    mr: int


@dataclasses.dataclass(frozen=True, slots=True)
class Setup:
    """A battle as ``fight`` reads it: each fighter's side, QK, and the turn cap."""

    sides: tuple[_Side, ...]
    qks: tuple[int, ...]
    max_turns: int


def request_seed(battle: Battle) -> bytes:
    """SHA-256 of the request as decoded: the same request, the same estimate."""
    return hashlib.sha256(SEED_PREFIX + msgspec.json.encode(battle)).digest()


def estimate_battle(battle: Battle) -> Estimated:
    """Fight ``battle`` in rounds until every outcome's 95 % interval is within
    ``PRECISION``, or ``MAX_BATTLES`` are fought."""
    setup = prepare(battle)
    seed = request_seed(battle)
    # Reproducible, not secret: a GM's odds, never a roll (rolls use ``randomness``).
    coins = FastCoins(random.Random(int.from_bytes(seed, "big")))  # noqa: S311
    tally = [0] * (len(setup.sides) + 1)  # the last: no winner
    n = 0
    while n < MAX_BATTLES:
        for _ in range(min(ROUND, MAX_BATTLES - n)):
            coins.flipped = 0
            winner = fight(setup, coins)
            tally[-1 if winner is None else winner] += 1
        n = min(n + ROUND, MAX_BATTLES)
        if all(_half_width(count, n) <= PRECISION for count in tally):
            break
    return Estimated(
        battles=n,
        wins=tuple(tally[:-1]),
        turn_cap=tally[-1],
        intervals=tuple(wilson(count, n) for count in tally),
        seed=seed.hex(),
    )


def wilson(count: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``count`` successes in ``n`` trials.

    >>> [round(x, 3) for x in wilson(1201, 2401)]
    [0.48, 0.52]
    """
    p = count / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # None (or all) counted: the interval starts at 0 (or ends at 1) exactly; rounding
    # would leave a speck inside.
    low = 0.0 if count == 0 else max(0.0, centre - half)
    high = 1.0 if count == n else min(1.0, centre + half)
    return low, high


def fight(setup: Setup, coins: Coins) -> int | None:
    """One battle by the rules of ``resolve_battle``: the winner's index, or None when the
    turn cap or the coin limit ends it."""
    sides = [dataclasses.replace(s, heals=list(s.heals)) for s in setup.sides]
    order, _ = initiative_order(list(setup.qks), coins)  # type: ignore[arg-type]
    standing = sum(s.hp > 0 for s in sides)
    turns = 0
    heads = coins.heads
    while turns < setup.max_turns and standing > 1:
        for actor in order:
            if turns >= setup.max_turns or standing <= 1:
                break
            if coins.flipped >= MAX_BATTLE_COINS:
                return None
            me = sides[actor]
            if me.hp <= 0:
                continue
            turns += 1
            if me.hp < me.heal_below and me.heals:
                me.hp = min(me.max_hp, me.hp + me.heals.pop(0))
                continue
            if me.action == _PASS:
                continue
            foe = sides[_next_standing(actor, order, sides)]
            if me.action == _SPELL:
                attack = heads("spell", me.sp) + me.bonus
                defence = heads("resist", foe.frm) + foe.mr
                dealt = 0 if 2 * defence >= attack else me.damage
            else:
                dealt = heads("attack", me.af) - heads("armor", foe.frw)
            if dealt > 0:
                foe.hp = max(0, foe.hp - dealt)
                if foe.hp == 0:
                    standing -= 1
    if standing == 1:
        return next(i for i, s in enumerate(sides) if s.hp > 0)
    return None


def prepare(battle: Battle) -> Setup:
    """The battle's fighters as ``fight`` reads them, checked as a battle checks them."""
    unique_names(battle.fighters)
    sides = []
    qks = []
    for index, fighter in enumerate(battle.fighters):
        at = f"fighters[{index}]."
        scores = effective(fighter, at)
        potions = [potion_item(p, f"{at}potions") for p in fighter.potions]
        plan = planned_spell(fighter, scores, f"{at}tactic.cast_spell")
        action = _SPELL if plan is not None else _ATTACK if scores.af else _PASS
        below = fighter.tactic.heal_below
        sides.append(
            _Side(
                hp=current_hp(fighter),
                max_hp=fighter.max_hp,
                heal_below=0 if below is None else below,
                heals=[p.effect.amount for p in potions if isinstance(p.effect, Heal)],
                action=action,
                af=scores.af,
                sp=plan.sp if plan else 0,
                bonus=scores.ma - plan.min_ma if plan else 0,
                damage=plan.damage if plan else 0,
                frw=scores.frw,
                frm=scores.frm,
                mr=scores.mr,
            )
        )
        qks.append(scores.qk)
    return Setup(sides=tuple(sides), qks=tuple(qks), max_turns=battle.max_turns)


def _half_width(count: int, n: int) -> float:
    low, high = wilson(count, n)
    return max(count / n - low, high - count / n)


def _next_standing(actor: int, order: list[int], sides: list[_Side]) -> int:
    start = order.index(actor)
    for step in range(1, len(order)):
        candidate = order[(start + step) % len(order)]
        if sides[candidate].hp > 0:
            return candidate
    return actor
