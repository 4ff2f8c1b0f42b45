"""The envelope every roll shares: request ``{table?, seed?, dice?}`` and the response."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Protocol

import msgspec

from fairroll.audit import Entry, Source
from fairroll.randomness import Die, Seed

__all__ = [
    "GroupName",
    "Probability",
    "Receipt",
    "RollEnvelope",
    "RollResponse",
    "Seed",
    "SuppliedFaces",
    "TableName",
    "probability_of",
    "receipt_of",
]

TableName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="The table (audit trail) the roll is recorded in.",
        examples=["default"],
    ),
]
GroupName = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=r"^[a-z_]+$")]
Face = Annotated[int, msgspec.Meta(ge=1, le=1000)]
SuppliedFaces = Annotated[
    dict[GroupName, Annotated[list[Face], msgspec.Meta(max_length=64)]],
    msgspec.Meta(
        description=(
            "Faces rolled elsewhere (physical or VTT dice), by group, in roll order. "
            "The service adjudicates them and records them as supplied."
        )
    ),
]


class RollEnvelope(Protocol):
    """Fields every roll request accepts. A request subclasses its mechanic's input
    struct and declares these three (msgspec structs take one base with fields)::

        table: TableName = "default"
        seed: Seed | None = None
        dice: SuppliedFaces | None = None
    """

    @property
    def table(self) -> str: ...

    @property
    def seed(self) -> str | None: ...

    @property
    def dice(self) -> dict[str, list[int]] | None: ...


class Receipt(msgspec.Struct, frozen=True, kw_only=True):
    """Identifies the audit entry that records the roll."""

    table: str
    seq: int
    entry_hash: str
    signature: str
    key_id: str


class RollResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Fields every roll response carries; each mechanic adds its ``outcome``."""

    mechanic: str
    source: Source
    seed: str | None
    dice: tuple[Die, ...]
    receipt: Receipt


class Probability(msgspec.Struct, frozen=True, kw_only=True):
    """An exact probability (a reduced fraction as text, e.g. ``"5/12"``) and its float."""

    exact: str
    value: float


def probability_of(value: Fraction) -> Probability:
    return Probability(exact=f"{value.numerator}/{value.denominator}", value=float(value))


def receipt_of(entry: Entry) -> Receipt:
    return Receipt(
        table=entry.table,
        seq=entry.seq,
        entry_hash=entry.entry_hash,
        signature=entry.signature,
        key_id=entry.key_id,
    )
