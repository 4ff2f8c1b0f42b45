"""What a process serves with, as one typed value: built once in the lifespan
(``api.lifespan``) from the settings' wiring (``api.wiring``), and given to handlers as
a dependency (``api.dependencies``), as litestar-fullstack gives its services. The
middleware below the handlers (the rate limit, the calculation pool) reads it with
``services_of``: one slot of the app's state, where there were a dozen read by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from litestar import Litestar

# At run time, not for type checking only: a handler that takes ``Services`` has it
# checked against these annotations (Litestar's signature model, msgspec's convert).
from fairroll.api.compute.pool import ComputePool
from fairroll.api.wiring import Limits
from fairroll.audit import AuditStore
from fairroll.audit.sessions import SeedSessions
from fairroll.play.events import TableEvents

__all__ = ["Services", "TableRules", "served", "services_of"]


@dataclass(frozen=True, slots=True)
class TableRules:
    """Who may roll where: whether the default table takes rolls without a write key,
    whether rolls need a table made with ``POST /v1/tables``, and whether a roll in a
    seed session must show the session's token (``required``) or may (``optional``)."""

    default_table_open: bool
    require_tables: bool
    #: ``required`` unless the settings say otherwise: a session's token is shown.
    session_tokens: Literal["required", "optional"] = "required"


@dataclass(frozen=True, slots=True)
class Services:
    """The audit store and what stands on it (seed sessions, live events), the
    calculation pool (None without workers), the limits on each client and the rules
    of the tables."""

    store: AuditStore
    sessions: SeedSessions
    events: TableEvents
    compute: ComputePool | None
    limits: Limits
    tables: TableRules


def services_of(app: Litestar) -> Services:
    """The services the app's lifespan built (an ``AttributeError`` before it ran)."""
    services: Services = app.state.services
    return services


def served(app: Litestar) -> Services | None:
    """The services, or None in an app whose lifespan built none (a benchmark's bare
    route inside fairroll's middleware): what reads them then does without."""
    services: Services | None = getattr(app.state, "services", None)
    return services
