"""The envelope every roll shares: request ``{table?, seed?, dice?, session?, sealed?}``
and the response."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Protocol

import msgspec
from msgspec import UnsetType

from fairroll.audit.entry import Receipt, Session, Source, receipt_of
from fairroll.audit.sealed import BLIND_PATTERN, Audience
from fairroll.randomness import Die, Seed

__all__ = [
    "Blind",
    "Opening",
    "Receipt",
    "RollEnvelope",
    "RollResponse",
    "SealedRef",
    "Seed",
    "SessionRef",
    "SuppliedGroups",
    "TableName",
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
        sealed: SealedRef | UnsetType = UNSET    # with a hash-chain session only

    (``api.controllers.systems`` builds each mechanic's request type so, from its declaration).
    """

    @property
    def table(self) -> str: ...

    @property
    def seed(self) -> str | UnsetType: ...

    @property
    def session(self) -> SessionRef | UnsetType: ...

    @property
    def sealed(self) -> SealedRef | UnsetType: ...

    @property
    def dice(self) -> SuppliedGroups | UnsetType:
        """Faces rolled elsewhere (a mechanic's ``...Dice`` struct)."""
        ...


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


#: A sealed roll's blind: 32 random bytes its roller's client drew, as lowercase hex.
Blind = Annotated[str, msgspec.Meta(pattern=BLIND_PATTERN)]


class SealedRef(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Seal the roll (a hash-chain seed session only): its entry records a commitment to
    the request, dice and outcome, which ``POST /v1/tables/{table}/sealed/{seq}/reveal``
    opens later. The answer goes to the caller in every mode; who else sees it is the
    VTT's display, as Foundry shows its own blind and self rolls."""

    audience: Annotated[
        Audience,
        msgspec.Meta(
            description="Whom the roller's VTT shows the roll to: `gm` (roller and GM: "
            "Foundry's GM roll, Roll20's `/gr`), `blind` (the GM only), `self` (the "
            "roller only)."
        ),
    ]
    blind: Annotated[
        str,
        msgspec.Meta(
            pattern=BLIND_PATTERN,
            description="32 random bytes the roller's client drew (64 lowercase hex "
            "digits), never the server's: the dice derive from "
            "`link:client_seed:nonce:blind`.",
            examples=["5c0f" * 16],
        ),
    ]


class Opening(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a sealed roll's commitment is the SHA-256 of (after ``fairroll/sealed/v1\\n``,
    in its RFC 8785 form): the blind, the mechanic, its request as an entry of that
    mechanic holds it, the dice and the outcome. (A roll's answer types it as its
    mechanic's, ``<Mechanic>Opening``: ``api.controllers.systems``.)"""

    blind: Blind
    mechanic: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    request: dict[str, Any]
    dice: tuple[Die, ...]
    outcome: Any


class RollResponse(msgspec.Struct, frozen=True, kw_only=True):
    """Fields every roll response carries; each mechanic adds its ``outcome`` (and, for a
    sealed roll, its ``opening``, typed as the mechanic's). A sealed roll's ``mechanic``,
    ``source``, ``seed`` and ``session`` are its entry's (``sealed.roll``), its dice and
    outcome the opening's."""

    mechanic: str
    source: Source
    seed: str | None
    session: Session | None
    dice: tuple[Die, ...]
    receipt: Receipt
