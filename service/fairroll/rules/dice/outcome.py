"""What a rolled formula answers: its total, each term's dice, each group's picks.

A field a formula of fairroll's first reading never sets is left out when unset
(``msgspec.UNSET``), so an entry rolled before the dialects replays to the same bytes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["FormulaOutcome", "GroupOutcome", "RolledDie", "TermOutcome"]


class RolledDie(msgspec.Struct, frozen=True, kw_only=True):
    """One die a term rolled, in roll order: its value (-1..1 for a Fate die), and what
    became of it. A rerolled or dropped die does not count; an exploded one made the next.
    ``success`` is whether it met the term's target (null where the term counts none).
    Set only where they apply: ``face`` (the face rolled, where the value differs: a
    minimum, a penetrating die, a margin), ``failure`` (it counts against the successes),
    ``count`` (what it counts, where that is not 0 or 1), ``compounded`` (added into the
    die after it: Roll20's ``!!``)."""

    value: int
    rerolled: bool = False
    exploded: bool = False
    dropped: bool = False
    success: bool | None = None
    face: int | msgspec.UnsetType = msgspec.UNSET
    failure: bool | msgspec.UnsetType = msgspec.UNSET
    count: int | msgspec.UnsetType = msgspec.UNSET
    compounded: bool | msgspec.UnsetType = msgspec.UNSET


class TermOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A dice term of the formula: as written, where (``offset`` in the formula), its
    dice and its value (the sum of the dice that count, or how many succeeded).
    ``stopped``, set only where it happened: the VTT's limit that stopped its dice
    (``explosions`` or ``rerolls`` of one die, Roll20; ``checked``, the results a Foundry
    modifier checks; ``rolled``, the dice an avrae roll rolls)."""

    text: str
    offset: int
    sides: int
    fate: bool
    value: int
    successes: int | None
    dice: tuple[RolledDie, ...]
    stopped: Literal["explosions", "rerolls", "checked", "rolled"] | msgspec.UnsetType = (
        msgspec.UNSET
    )


class GroupOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A group of sub-rolls (``{2d20, 1d20+5}kh1``): where it starts, each sub-roll's
    total, which were kept, and its successes where it counts them."""

    offset: int
    values: tuple[float, ...]
    kept: tuple[bool, ...]
    successes: int | None = None


class FormulaOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A rolled formula: its total (an integer, written as one, unless the formula divides:
    then the nearest double to the exact fraction), each dice term as rolled, its label,
    and its groups where it has any."""

    total: float
    label: str | None
    terms: tuple[TermOutcome, ...]
    groups: tuple[GroupOutcome, ...] | msgspec.UnsetType = msgspec.UNSET
