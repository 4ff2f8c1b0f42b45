"""A client for fairroll, the verifiable dice service.

>>> from fairroll_client import Fairroll
>>> dice = Fairroll("https://dice.example")                      # doctest: +SKIP
>>> table = dice.create_table()                                  # doctest: +SKIP
>>> rolled = dice.with_key(table["write_key"]).roll_formula(
...     "4d6kh3 # Strength", table=table["table"])               # doctest: +SKIP

``AsyncFairroll`` makes the same calls for asyncio (``await dice.roll_formula(...)``).

It needs no part of the service: ``httpx`` for HTTP and ``cryptography`` for the
Ed25519 signatures it checks. ``verify_export`` checks a table's log here, trusting
nothing the server says about it; ``verify_tiles`` checks it from its tiles (the server's
or a mirror's).
"""

from __future__ import annotations

from fairroll_client.aio import AsyncFairroll, AsyncPlayerSession
from fairroll_client.checkpoints import Kept, KeptCheckpoints
from fairroll_client.client import Fairroll
from fairroll_client.errors import (
    FairrollError,
    NonceRefusedError,
    SessionClosedError,
    UnfairRollError,
)
from fairroll_client.events import Event, parse_events
from fairroll_client.sessions import NOT_VERIFIED, PlayerSession, SessionState
from fairroll_client.tiles import verify_tiles
from fairroll_client.verify import Verified, verify_export
from fairroll_client.witness import (
    Checked,
    Equivocation,
    EquivocationError,
    TableWitness,
    ViewError,
)

__all__ = [
    "NOT_VERIFIED",
    "SPEC_VERSION",
    "AsyncFairroll",
    "AsyncPlayerSession",
    "Checked",
    "Equivocation",
    "EquivocationError",
    "Event",
    "Fairroll",
    "FairrollError",
    "Kept",
    "KeptCheckpoints",
    "NonceRefusedError",
    "PlayerSession",
    "SessionClosedError",
    "SessionState",
    "TableWitness",
    "UnfairRollError",
    "Verified",
    "ViewError",
    "parse_events",
    "verify_export",
    "verify_tiles",
]

#: The version of the fairroll API spec this client follows (and its own version).
SPEC_VERSION = "0.1.0"
