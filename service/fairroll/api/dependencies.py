"""What handlers are given (Litestar's ``Provide``): the services the lifespan built
(``api.services``), their store, seed sessions and live events, and a request's
``Roller``."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import Provide

from fairroll.api.request_headers import single
from fairroll.api.services import Services
from fairroll.audit import AuditStore
from fairroll.audit.sessions import SeedSessions
from fairroll.play.events import TableEvents
from fairroll.play.rolls import Roller
from fairroll.play.sessions import SESSION_TOKEN_HEADER, BoundRoller, SessionBinding

__all__ = ["DEPENDENCIES", "roller_of"]


def roller_of(request: Request[Any, Any, Any]) -> Roller:
    """The roller of one request, from the app's services and the request's headers (each
    sent at most once: ``request_headers.single``), holding a roll in a session and a
    call on a session's path to the session's token (``play.sessions``)."""
    services = _services(request.app.state)
    headers = request.headers
    binding = SessionBinding(
        services.store.redis,
        single(headers, SESSION_TOKEN_HEADER),
        policy=services.tables.session_tokens,
    )
    seed_id = request.path_params.get("seed_id")
    return BoundRoller(
        services.store,
        services.sessions,
        binding=binding,
        path_session=seed_id if isinstance(seed_id, str) else None,
        authorization=single(headers, "Authorization"),
        idempotency_key=single(headers, "Idempotency-Key"),
        default_open=services.tables.default_table_open,
        require_tables=services.tables.require_tables,
    )


def _services(state: State) -> Services:
    services: Services = state.services
    return services


def _store(state: State) -> AuditStore:
    return _services(state).store


def _sessions(state: State) -> SeedSessions:
    return _services(state).sessions


def _events(state: State) -> TableEvents:
    return _services(state).events


DEPENDENCIES = {
    "services": Provide(_services, sync_to_thread=False),
    "store": Provide(_store, sync_to_thread=False),
    "roller": Provide(roller_of, sync_to_thread=False),
    "sessions": Provide(_sessions, sync_to_thread=False),
    "events": Provide(_events, sync_to_thread=False),
}
