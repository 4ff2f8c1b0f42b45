"""Faster, Better, Cheaper (Kirt A. Dankmyer, 2003): d6 pool rolls and PC conflicts.

A character risks dice from a pool and rolls them against a target number
(3 for an average task). Each die whose face, plus Better and minus Worse,
meets the target is a Success: one fact to narrate. Dice are lost from the pool
by their *raw* face; Cheaper keeps that many lost dice, Expensive loses that
many successful ones; each natural 6 adds a die (1 + Faster dice, or with
Slower a chance die decides); successes may be turned into pool dice, but one
must stay a fact. The pool never drops below 1.

>>> roll = Roll(pool=10, risk=5)                       # the pit climb
>>> score_roll(roll, (2, 1, 1, 4, 5), ()).new_pool
7
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Literal

import msgspec

from fairroll.randomness import DiceSource
from fairroll.rules.errors import RuleError
from fairroll.rules.vocabulary import OPPOSITES, Name, check_unique_names

__all__ = [
    "CONFLICT_TARGET",
    "MAX_RISK",
    "Adjectives",
    "ChanceDie",
    "Conflict",
    "ConflictOutcome",
    "DieResult",
    "Participant",
    "ParticipantOutcome",
    "PoolChange",
    "Roll",
    "RollOutcome",
    "Tiebreak",
    "Turn",
    "adjectives_of",
    "chance_threshold",
    "check_conflict",
    "check_risk",
    "participant_roll",
    "resolve_conflict",
    "resolve_roll",
    "score_roll",
]

PositiveAdjective = Literal["faster", "better", "cheaper"]
Narrate = Literal["first", "last"]
Fate = Literal["kept", "lost", "kept_by_cheaper", "lost_to_expensive"]
Cause = Literal["failed_dice", "cheaper", "expensive", "sixes", "converted", "floor"]

#: Most dice one roll may risk.
MAX_RISK = 30
#: "If PCs are in conflict, all make rolls simultaneously ... at the average target number of 3".
CONFLICT_TARGET = 3
DIE = 6

Pool = Annotated[int, msgspec.Meta(ge=1, le=999, description="Dice in the pool now (>= 1).")]
Risk = Annotated[
    int, msgspec.Meta(ge=1, le=MAX_RISK, description="Dice risked and rolled (1..pool).")
]
Target = Annotated[int, msgspec.Meta(ge=1, le=12, description="Target number; 3 is average.")]
Count = Annotated[int, msgspec.Meta(ge=0, le=6)]
Convert = Annotated[
    int,
    msgspec.Meta(
        ge=0,
        le=MAX_RISK,
        description=(
            "Successes to turn into pool dice instead of facts, at most: one success "
            "always stays a fact, so fewer may be converted."
        ),
    ),
]


class _Risk(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What every roll states: pool, dice risked, the Trait's adjectives, conversions."""

    pool: Pool
    risk: Risk
    faster: Count = 0
    better: Count = 0
    cheaper: Count = 0
    slower: Count = 0
    worse: Count = 0
    expensive: Count = 0
    style_as: PositiveAdjective | None = None
    convert: Convert = 0


class Roll(_Risk, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One character's roll, with the adjectives of the Trait that applies."""

    target: Target = 3


class Adjectives(msgspec.Struct, frozen=True, kw_only=True):
    """The adjectives in effect for a roll, the style adjective counted in."""

    faster: int
    better: int
    cheaper: int
    slower: int
    worse: int
    expensive: int


class DieResult(msgspec.Struct, frozen=True, kw_only=True):
    """One risked die: raw face, face after Better/Worse, and what became of it."""

    raw: int
    modified: int
    success: bool
    natural_six: bool
    fate: Fate


class ChanceDie(msgspec.Struct, frozen=True, kw_only=True):
    """A Slower character's chance die for a natural 6."""

    face: int
    extra_die: bool


class PoolChange(msgspec.Struct, frozen=True, kw_only=True):
    cause: Cause
    change: int


class RollOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a roll did: every die, the successes and every change to the pool."""

    adjectives: Adjectives
    target: int
    dice: tuple[DieResult, ...]
    chance_dice: tuple[ChanceDie, ...]
    successes: int
    facts: int
    converted: int
    pool_before: int
    pool_changes: tuple[PoolChange, ...]
    new_pool: int


def adjectives_of(roll: _Risk, field_prefix: str = "") -> Adjectives:
    """The adjectives in effect, with ``style_as``; opposites together are a RuleError."""
    counts = {
        "faster": roll.faster,
        "better": roll.better,
        "cheaper": roll.cheaper,
    }
    if roll.style_as is not None:
        counts[roll.style_as] += 1
    adjectives = Adjectives(
        **counts, slower=roll.slower, worse=roll.worse, expensive=roll.expensive
    )
    for positive, negative in OPPOSITES:
        if getattr(adjectives, positive) and getattr(adjectives, negative):
            raise RuleError(
                f"a Trait cannot be both {positive.capitalize()} and {negative.capitalize()}: "
                "they are opposites",
                field=field_prefix + negative,
            )
    return adjectives


def chance_threshold(slower: int) -> int:
    """Highest chance-die face that still gives a Slower character its extra die (0: none).

    >>> [chance_threshold(s) for s in range(5)]
    [6, 3, 2, 1, 0]
    """
    return 6 if slower == 0 else max(0, 4 - slower)


def resolve_roll(roll: Roll, dice: DiceSource) -> RollOutcome:
    """Roll ``risk`` d6 (group ``risk``), then a chance d6 per natural 6 if Slower 1..3."""
    check_risk(roll)
    adjectives = adjectives_of(roll)
    faces, chance = _roll_dice(dice, roll.risk, adjectives, "")
    return _score(roll.pool, roll.target, roll.convert, adjectives, faces, chance)


def _roll_dice(
    dice: DiceSource, risk: int, adjectives: Adjectives, prefix: str
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    faces = dice.roll(f"{prefix}risk", DIE, risk)
    sixes = faces.count(DIE)
    if sixes and 1 <= adjectives.slower <= 3:
        # "roll an extra 'chance' die for each 6"
        return faces, dice.roll(f"{prefix}chance", DIE, sixes)
    return faces, ()


def score_roll(roll: Roll, faces: tuple[int, ...], chance: tuple[int, ...]) -> RollOutcome:
    """Score a roll from its faces (and chance dice): the pure part of :func:`resolve_roll`."""
    return _score(roll.pool, roll.target, roll.convert, adjectives_of(roll), faces, chance)


def _score(
    pool: int,
    target: int,
    convert: int,
    adj: Adjectives,
    faces: tuple[int, ...],
    chance: tuple[int, ...],
) -> RollOutcome:
    shift = adj.better - adj.worse
    hits = [raw + shift >= target for raw in faces]
    fates: list[Fate] = []
    cheaper_left = adj.cheaper
    for raw in faces:
        # "the raw, unmodified die roll is used to determine if the die is lost from the pool";
        # Cheaper "get[s] to keep one failed die out of each roll".
        if raw >= target:
            fates.append("kept")
        elif cheaper_left:
            fates.append("kept_by_cheaper")
            cheaper_left -= 1
        else:
            fates.append("lost")
    expensive_left = adj.expensive
    for index, fate in enumerate(fates):
        # "Expensive characters lose one successful die from their pool"
        if expensive_left and hits[index] and fate == "kept":
            fates[index] = "lost_to_expensive"
            expensive_left -= 1
    dice = tuple(
        DieResult(raw=raw, modified=raw + shift, success=hit, natural_six=raw == DIE, fate=fate)
        for raw, hit, fate in zip(faces, hits, fates, strict=True)
    )
    tally = Counter(fates)
    successes = sum(die.success for die in dice)
    converted = min(convert, max(successes - 1, 0))
    chance_dice = tuple(
        ChanceDie(face=face, extra_die=face <= chance_threshold(adj.slower)) for face in chance
    )
    sixes = sum(die.natural_six for die in dice)
    if adj.slower == 0:
        six_gain = sixes * (1 + adj.faster)
    else:
        six_gain = sum(c.extra_die for c in chance_dice)
    changes = [
        PoolChange(cause="failed_dice", change=-(tally["lost"] + tally["kept_by_cheaper"])),
        PoolChange(cause="cheaper", change=tally["kept_by_cheaper"]),
        PoolChange(cause="expensive", change=-tally["lost_to_expensive"]),
        PoolChange(cause="sixes", change=six_gain),
        PoolChange(cause="converted", change=converted),
    ]
    pool_after = pool + sum(change.change for change in changes)
    if pool_after < 1:  # "A character's pool can never go below 1."
        changes.append(PoolChange(cause="floor", change=1 - pool_after))
    return RollOutcome(
        adjectives=adj,
        target=target,
        dice=dice,
        chance_dice=chance_dice,
        successes=successes,
        facts=successes - converted,
        converted=converted,
        pool_before=pool,
        pool_changes=tuple(change for change in changes if change.change),
        new_pool=max(pool_after, 1),
    )


# --- PC-vs-PC conflicts --------------------------------------------------------------------


class Participant(_Risk, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A PC in a conflict: a roll at target 3, plus first-or-last narration preference."""

    name: Name
    narrate: Narrate = "first"


class Conflict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """PCs in conflict: everyone rolls at once, then they take turns narrating facts."""

    participants: Annotated[list[Participant], msgspec.Meta(min_length=2, max_length=8)]


class Tiebreak(msgspec.Struct, frozen=True, kw_only=True):
    """Equally Fast participants with equal successes: a die chose who decides next."""

    tied: tuple[str, ...]
    face: int
    chosen: str


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    participant: str
    action: Literal["fact", "pass"]


class ParticipantOutcome(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    narrate: Narrate
    speed: int
    roll: RollOutcome


class ConflictOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Who chose their place in which order, the narration order and every turn."""

    choosing_order: tuple[str, ...]
    narration_order: tuple[str, ...]
    tiebreaks: tuple[Tiebreak, ...]
    turns: tuple[Turn, ...]
    participants: tuple[ParticipantOutcome, ...]


def check_conflict(conflict: Conflict) -> None:
    """Names that differ, and no participant risking more dice than their pool holds."""
    check_unique_names([p.name for p in conflict.participants], "participants")
    for index, participant in enumerate(conflict.participants):
        check_risk(participant, f"participants[{index}].", who=f"{participant.name} ")


def check_risk(roll: _Risk, field_prefix: str = "", *, who: str = "") -> None:
    """A roll risks no more dice than its pool holds: the one place this is checked.

    >>> check_risk(Roll(pool=2, risk=3))
    Traceback (most recent call last):
    fairroll.rules.errors.RuleError: cannot risk 3 dice from a pool of 2
    """
    if roll.risk > roll.pool:
        raise RuleError(
            f"{who}cannot risk {roll.risk} dice from a pool of {roll.pool}",
            field=f"{field_prefix}risk",
        )


def participant_roll(participant: Participant) -> Roll:
    """A participant's own roll: their pool, risk and adjectives at the conflict target."""
    fields = msgspec.structs.asdict(participant)
    del fields["name"], fields["narrate"]
    return Roll(**fields, target=CONFLICT_TARGET)


def resolve_conflict(conflict: Conflict, dice: DiceSource) -> ConflictOutcome:
    """Roll every participant (groups ``p1.risk``, ``p1.chance``, ``p2.risk`` ...), then
    settle the narration order (ties: group ``tiebreak``, a d``k`` among ``k`` tied) and turns.
    """
    check_conflict(conflict)
    outcomes = []
    for index, participant in enumerate(conflict.participants):
        prefix = f"participants[{index}]."
        adjectives = adjectives_of(participant, prefix)
        faces, chance = _roll_dice(dice, participant.risk, adjectives, f"p{index + 1}.")
        outcome = _score(
            participant.pool, CONFLICT_TARGET, participant.convert, adjectives, faces, chance
        )
        outcomes.append(
            ParticipantOutcome(
                name=participant.name,
                narrate=participant.narrate,
                # "Slower characters ... go last where turn order is important"
                speed=adjectives.faster - adjectives.slower,
                roll=outcome,
            )
        )
    choosing, tiebreaks = _choosing_order(outcomes, dice)
    order = _narration_order(choosing)
    return ConflictOutcome(
        choosing_order=tuple(p.name for p in choosing),
        narration_order=tuple(p.name for p in order),
        tiebreaks=tuple(tiebreaks),
        turns=_turns(order),
        participants=tuple(outcomes),
    )


def _choosing_order(
    outcomes: list[ParticipantOutcome], dice: DiceSource
) -> tuple[list[ParticipantOutcome], list[Tiebreak]]:
    # "The player whose character is Faster chooses ..., or if both characters are equally
    #  Fast, whoever has the most Successes ..., or in the case of a tie, randomly determine"
    def rank(p: ParticipantOutcome) -> tuple[int, int]:
        return (-p.speed, -p.roll.successes)

    ordered: list[ParticipantOutcome] = []
    tiebreaks: list[Tiebreak] = []
    for key in sorted({rank(p) for p in outcomes}):
        tied = [p for p in outcomes if rank(p) == key]  # request order
        while len(tied) > 1:
            (face,) = dice.roll("tiebreak", len(tied), 1)
            chosen = tied.pop(face - 1)
            tiebreaks.append(
                Tiebreak(tied=(chosen.name, *(p.name for p in tied)), face=face, chosen=chosen.name)
            )
            ordered.append(chosen)
        ordered.extend(tied)
    return ordered, tiebreaks


def _narration_order(choosing: list[ParticipantOutcome]) -> list[ParticipantOutcome]:
    # Each chooser takes the earliest or latest free slot: "they cannot trump the
    # previously-decided order".
    slots: list[ParticipantOutcome | None] = [None] * len(choosing)
    for participant in choosing:
        free = [i for i, taken in enumerate(slots) if taken is None]
        slots[free[0] if participant.narrate == "first" else free[-1]] = participant
    return [p for p in slots if p is not None]


def _turns(order: list[ParticipantOutcome]) -> tuple[Turn, ...]:
    # Facts first; a pass (a success turned into a pool die) only after a fact.
    facts = {p.name: p.roll.facts for p in order}
    passes = {p.name: p.roll.converted for p in order}
    turns = []
    while any(facts.values()) or any(passes.values()):
        for participant in order:
            name = participant.name
            if facts[name]:
                facts[name] -= 1
                turns.append(Turn(participant=name, action="fact"))
            elif passes[name]:
                passes[name] -= 1
                turns.append(Turn(participant=name, action="pass"))
    return tuple(turns)
