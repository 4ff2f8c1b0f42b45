"""The envelope every roll shares: request ``{table?, seed?, dice?}`` and the response."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Annotated, Any, Protocol

import msgspec
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import Body
from msgspec import UnsetType

from fairroll.audit.entry import Receipt, Session, Source, receipt_of
from fairroll.randomness import Die, Seed

__all__ = [
    "ROLL_BODY",
    "CountOdds",
    "Probability",
    "Receipt",
    "RollEnvelope",
    "RollResponse",
    "Seed",
    "SessionRef",
    "SuppliedGroups",
    "TableName",
    "counts_of",
    "faces_meta",
    "not_exactly_one_of",
    "probability_of",
    "receipt_of",
    "roll_body",
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


class SuppliedGroups(Protocol):
    """A mechanic's supplied-dice struct: it lists its faces by dice group."""

    def groups(self) -> Mapping[str, Sequence[int]]:
        """Faces by dice group, as the rules roll them."""
        ...

    def path(self, group: str) -> str:
        """Where (under ``dice``) the request gave a group's faces."""
        ...


class RollEnvelope(Protocol):
    """Fields every roll request accepts. A request subclasses its mechanic's input
    struct and declares these three (msgspec structs take one base with fields)::

        table: TableName = "default"
        seed: Seed | UnsetType = UNSET
        dice: <Mechanic>Dice | UnsetType = UNSET   # one field per dice group
        session: SessionRef | UnsetType = UNSET

    and its handler declares ``data: Annotated[<Mechanic>Request, ROLL_BODY]``.
    """

    @property
    def table(self) -> str: ...

    @property
    def seed(self) -> str | UnsetType: ...

    @property
    def session(self) -> SessionRef | UnsetType: ...

    @property
    def dice(self) -> SuppliedGroups | UnsetType:
        """Faces rolled elsewhere (a mechanic's ``...Dice`` struct)."""
        ...


def not_exactly_one_of(*fields: str) -> list[Schema]:
    """Shapes that break "exactly one of ``fields``", for a ``not: {anyOf: [...]}``.

    Said with ``not`` rather than a top-level ``oneOf``: SDK generators
    (openapi-python-client, openapi-typescript) read a ``oneOf`` of bare ``required``
    lists as a union of untyped objects and lose the model.
    """
    pairs = [Schema(required=[a, b]) for i, a in enumerate(fields) for b in fields[i + 1 :]]
    return [*pairs, Schema(schema_not=Schema(any_of=[Schema(required=[f]) for f in fields]))]


def roll_body(*, forbid: list[Schema] | None = None, **schema_extra: object) -> Any:
    """The body of a roll: a seed, a seed session, or supplied dice, at most one of them;
    ``forbid`` adds shapes a mechanic refuses, ``schema_extra`` its other cross-field
    constraints."""
    return Body(
        description="Mechanic fields, plus optional table, seed (replay) or supplied dice.",
        schema_extra={
            "not": Schema(
                any_of=[
                    Schema(required=["seed", "dice"]),
                    Schema(required=["session", "seed"]),
                    Schema(required=["session", "dice"]),
                    *(forbid or []),
                ]
            ),
            **schema_extra,
        },
    )


ROLL_BODY = roll_body()


def faces_meta(
    sides: int, max_dice: int, *, min_dice: int = 1, description: str | None = None
) -> msgspec.Meta:
    """Limits of a list of supplied d``sides`` faces, spelt out for the OpenAPI spec too.

    The server validates each face through the item type (``Annotated[int,
    Meta(ge=1, le=sides)]``); Litestar does not render item constraints, so the
    item schema is given explicitly.
    """
    return msgspec.Meta(
        min_length=min_dice,
        max_length=max_dice,
        description=description or f"Faces of d{sides}s rolled elsewhere, in roll order.",
        extra_json_schema={
            "extra": {"items": Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=sides)}
        },
    )


class SessionRef(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Roll in a commit-reveal seed session (``POST /v1/tables/{table}/seeds``): the dice
    derive from the committed server seed, this client seed and the session's next nonce
    (1, 2, 3 ... with no gaps: a refused roll takes none)."""

    seed_id: Annotated[
        str, msgspec.Meta(pattern=r"^s[A-Za-z0-9_-]{16}$", description="The session's id.")
    ]
    client_seed: Seed
    nonce: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=2**53 - 1,
                description="The nonce this roll must take: if the session is elsewhere, "
                "nothing is rolled and the answer is 409 with the right one (``nonce``).",
            ),
        ]
        | UnsetType
    ) = msgspec.UNSET


class RollResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Fields every roll response carries; each mechanic adds its ``outcome``."""

    mechanic: str
    source: Source
    seed: str | None
    session: Session | None
    dice: tuple[Die, ...]
    receipt: Receipt


class Probability(msgspec.Struct, frozen=True, kw_only=True):
    """An exact probability (a reduced fraction as text, e.g. ``"5/12"``) and its float."""

    exact: str
    value: float


def probability_of(value: Fraction, denominators: dict[int, str] | None = None) -> Probability:
    """``denominators`` memoises the decimal text of denominators across a distribution:
    they repeat (a level-up's 693 values share 10 powers of two of ~3,000 digits each),
    and writing a big integer in decimal is the costly step (74 ms of 80 there)."""
    den = value.denominator
    text = denominators.get(den) if denominators is not None else None
    if text is None:
        text = str(den)
        if denominators is not None:
            denominators[den] = text
    return Probability(exact=f"{value.numerator}/{text}", value=float(value))


class CountOdds(msgspec.Struct, frozen=True, kw_only=True):
    """The probability of one value of a count (successes, pool size, Profit ...)."""

    value: int
    probability: Probability


def counts_of(distribution: Mapping[int, Fraction]) -> list[CountOdds]:
    seen: dict[int, str] = {}
    return [
        CountOdds(value=k, probability=probability_of(p, seen)) for k, p in distribution.items()
    ]
