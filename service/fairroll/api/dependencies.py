"""What handlers are given (Litestar's ``Provide``): the store, seed sessions, live events
and a request's ``Roller``, all from the app's state (``lifespan``)."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import Provide

from fairroll.api.request_headers import single
from fairroll.audit import AuditStore
from fairroll.audit.sessions import SeedSessions
from fairroll.play.events import TableEvents
from fairroll.play.rolls import Roller
from fairroll.play.sessions import SESSION_TOKEN_HEADER, BoundRoller, SessionBinding

__all__ = ["DEPENDENCIES", "roller_of"]


def roller_of(request: Request[Any, Any, Any]) -> Roller:
    """The roller of one request, from the app's state and the request's headers (each
    sent at most once: ``request_headers.single``), holding a roll in a session and a
    call on a session's path to the session's token (``play.sessions``)."""
    state = request.app.state
    headers = request.headers
    binding = SessionBinding(
        state.store.redis,
        single(headers, SESSION_TOKEN_HEADER),
        policy=getattr(state, "session_tokens", "required"),
    )
    seed_id = request.path_params.get("seed_id")
    return BoundRoller(
        state.store,
        state.sessions,
        binding=binding,
        path_session=seed_id if isinstance(seed_id, str) else None,
        authorization=single(headers, "Authorization"),
        idempotency_key=single(headers, "Idempotency-Key"),
        default_open=state.default_table_open,
        require_tables=state.require_tables,
    )


def _store(state: State) -> AuditStore:
    store: AuditStore = state.store
    return store


def _sessions(state: State) -> SeedSessions:
    sessions: SeedSessions = state.sessions
    return sessions


def _events(state: State) -> TableEvents:
    events: TableEvents = state.events
    return events


DEPENDENCIES = {
    "store": Provide(_store, sync_to_thread=False),
    "roller": Provide(roller_of, sync_to_thread=False),
    "sessions": Provide(_sessions, sync_to_thread=False),
    "events": Provide(_events, sync_to_thread=False),
}
