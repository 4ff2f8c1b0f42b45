"""The Litestar application factory."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from litestar import Litestar, Request
from litestar.config.cors import CORSConfig
from litestar.datastructures import CacheControlHeader, State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import License, Tag
from litestar.static_files import create_static_files_router
from litestar.types import ASGIApp, Message, Scope
from redis.exceptions import RedisError

import fairroll
from fairroll.api.compute import ComputePool, compute_middleware
from fairroll.api.controllers.ops import HealthController, MetricsController
from fairroll.api.controllers.page import PageController
from fairroll.api.controllers.tables import (
    KeysController,
    NewTableController,
    TablesController,
    VerifyController,
)
from fairroll.api.direct import DirectRoutes
from fairroll.api.events import BLOCK_MS, TableEvents
from fairroll.api.examples import attach_examples
from fairroll.api.headers import DocsPage, security_headers
from fairroll.api.mechanics import SystemsController, system_routers, system_tags
from fairroll.api.metrics import FENCED_TABLES, HEAD_REGRESSIONS, http_metrics
from fairroll.api.openapi import (
    declare_closed_objects,
    declare_integer_bounds,
    declare_links,
    declare_ndjson,
    declare_response_fields,
    declare_roll_headers,
    publish,
)
from fairroll.api.problems import exception_handlers
from fairroll.api.protection import rate_limit, request_timeout
from fairroll.api.rolls import Roller
from fairroll.api.settings import Settings
from fairroll.api.strict import StrictDecoders, strict_body
from fairroll.audit import AuditStore, connect_redis, load_signer
from fairroll.audit.sessions import SWEEP_BATCH, SeedSessions
from fairroll.mechanics import import_systems, ordered

__all__ = ["create_app", "create_app_from_env"]

SWEEP_SECONDS = 60.0

#: Tags of the endpoints that are not a rule system's (each system tags its own).
SERVICE_TAGS = [
    Tag(name="systems", description="The rule systems and mechanics this server resolves."),
    Tag(name="audit", description="The signed, hash-chained roll log of each table."),
    Tag(name="operations", description="Health probes for orchestrators."),
]


class FairrollApp(Litestar):
    """Litestar, with what every response needs, before routing (so 404s and 405s too):

    - the security headers (``api.headers``) on every HTTP response;
    - ``HEAD`` answered on every ``GET`` route: the same status and headers
      (``Content-Length`` included), no body, as RFC 9110 asks of a server.
    """

    #: Set by ``create_app`` from the settings.
    headers_for: Callable[[str], list[tuple[bytes, bytes]]]
    #: The roll routes, answered below Litestar's handler machinery (``api.direct``).
    direct: DirectRoutes | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        extra = self.headers_for(scope["path"])
        head = scope["method"] == "HEAD"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            elif head and message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        if head:
            scope = {**scope, "method": "GET"}
        elif self.direct is not None and (found := self.direct.of(scope)) is not None:
            scope["app"] = scope["litestar_app"] = self
            scope.setdefault("state", {})
            await self.direct(found, scope, receive, send_with_headers)
            return
        await super().__call__(scope, receive, send_with_headers)


def create_app(settings: Settings) -> Litestar:
    """Build the app. Redis is opened on startup and closed on shutdown."""
    import_systems(settings.systems)
    systems = ordered()
    signer = load_signer(
        key=settings.signing_key,
        key_file=settings.signing_key_file,
        dev_dir=settings.dev_key_dir,
        certificate=settings.key_certificate,
    )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # A compute worker only reads, so it may retry a command on a dropped connection.
        redis = connect_redis(
            settings.redis_url,
            settings.redis_timeout_seconds,
            retries=2 if settings.compute_worker else 0,
        )
        store = AuditStore(
            redis,
            signer,
            replicas=settings.require_replicas,
            allow_unsafe=settings.durability == "memory",
            on_fence=_alarm,
            log_name=settings.log_name,
            root_key_id=settings.root_key_id,
        )
        with suppress(RedisError):  # else published on the first append; /readyz tells
            if not settings.compute_worker:  # a worker signs nothing: its key is no key
                await store.publish_key()
            await store.probe_durability()
        app.state.redis = redis
        app.state.store = store
        # Everything built at startup (modules, the OpenAPI document, msgspec types)
        # lives as long as the process: keep it out of the collector's full passes,
        # which otherwise stalled requests for tens of ms (benchmarks: p99 84 -> 39 ms).
        gc.collect()
        gc.freeze()
        app.state.sessions = sessions = SeedSessions(store)
        app.state.events = events = _table_events(settings, store)
        app.state.default_table_open = settings.default_table_open
        app.state.require_tables = settings.require_tables
        app.state.rate_limit = settings.rate_limit
        app.state.trusted_proxy_hops = settings.trusted_proxy_hops
        pool = None
        if settings.compute_workers > 0:
            pool = ComputePool(settings.compute_workers, settings.compute_timeout_seconds)
            await pool.start()
        app.state.compute = pool
        sweeper = None if settings.compute_worker else asyncio.ensure_future(_sweep(sessions))
        try:
            yield
        finally:
            if sweeper is not None:
                sweeper.cancel()
                with suppress(asyncio.CancelledError):
                    await sweeper
            if pool is not None:
                await pool.close()
            await events.close()
            await redis.aclose()

    app = FairrollApp(
        route_handlers=[
            *system_routers(systems),
            SystemsController,
            NewTableController,
            TablesController,
            KeysController,
            VerifyController,
            HealthController,
            MetricsController,
            PageController,
            # The in-page verifier (verify.js): VTT plugins and pages import it from here.
            create_static_files_router(
                path="/static",
                directories=[Path(__file__).with_name("static")],
                cache_control=CacheControlHeader(max_age=300, public=True),
            ),
        ],
        dependencies={
            "store": Provide(_provide_store, sync_to_thread=False),
            "roller": Provide(_provide_roller, sync_to_thread=False),
            "sessions": Provide(_provide_sessions, sync_to_thread=False),
            "events": Provide(_provide_events, sync_to_thread=False),
        },
        lifespan=[lifespan],
        middleware=_middleware(settings),
        exception_handlers=exception_handlers,
        before_request=_before_request,
        cors_config=CORSConfig(
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "OPTIONS"],
            # Last-Event-ID: an event stream resumed from another origin (EventSource too).
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Idempotency-Key",
                "If-None-Match",
                "Last-Event-ID",
            ],
            # What a plugin reads: the entity tag to revalidate, and the quota it has left.
            expose_headers=["ETag", "RateLimit", "RateLimit-Policy", "Retry-After"],
        )
        if settings.cors_origins
        else None,
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="fairroll",
            version=fairroll.__version__,
            description=(
                "Verifiable dice for tabletop systems. Every roll is replayable from its seed "
                "and recorded in a hash-chained, Ed25519-signed audit trail before it is answered."
            ),
            tags=[*system_tags(systems), *SERVICE_TAGS],
            license=License(name="MIT", identifier="MIT"),
            path="/schema",
            use_handler_docstrings=False,
            render_plugins=[DocsPage()],
        ),
    )
    # A compute worker's answers are relayed by the service, which adds the headers once.
    app.headers_for = (
        _no_headers if settings.compute_worker else security_headers(settings.frame_ancestors)
    )
    app.state.decoders = StrictDecoders(app)
    app.direct = DirectRoutes(app)
    _document(app)
    return app


def _document(app: Litestar) -> None:
    """What the OpenAPI document says beyond Litestar's own reading of the routes."""
    declare_closed_objects(app)
    declare_response_fields(app)
    declare_integer_bounds(app)
    declare_roll_headers(app)
    declare_links(app)
    declare_ndjson(app)
    attach_examples(app)
    publish(app)


def create_app_from_env() -> Litestar:
    """Factory for ASGI servers: settings from the environment."""
    return create_app(Settings.from_env())


async def _sweep(sessions: SeedSessions) -> None:
    """Reveal seed sessions idle for a day, once a minute (every process: it is idempotent)."""
    while True:
        with suppress(RedisError):
            while await sessions.sweep() >= SWEEP_BATCH:
                pass
        await asyncio.sleep(SWEEP_SECONDS)


def _middleware(settings: Settings) -> list[Callable[[ASGIApp], ASGIApp]]:
    """Every routed request's middleware, outermost first (the direct routes' too)."""
    return [
        http_metrics,
        rate_limit,
        request_timeout(settings.request_timeout_seconds),
        compute_middleware(_pool_of),
    ]


def _no_headers(path: str) -> list[tuple[bytes, bytes]]:
    return []


def _pool_of(scope: Scope) -> ComputePool | None:
    pool: ComputePool | None = getattr(scope["app"].state, "compute", None)
    return pool


def _alarm(table: str, acknowledged: int, seen: int) -> None:
    """A table's log went back (the store has stopped it and logged both seqs)."""
    HEAD_REGRESSIONS.inc()
    FENCED_TABLES.inc()


def _provide_store(state: State) -> AuditStore:
    store: AuditStore = state.store
    return store


async def _before_request(request: Request[Any, Any, Any]) -> None:
    await strict_body(request)


def _table_events(settings: Settings, store: AuditStore) -> TableEvents:
    """The live events, whose blocking reads take one connection per followed table, in a
    pool of their own (rolls keep theirs), waiting longer than a read blocks."""
    feeds_redis = connect_redis(
        settings.redis_url,
        settings.redis_timeout_seconds + BLOCK_MS / 1000,
        max_connections=settings.max_subscribers + 8,
    )
    return TableEvents(
        store,
        settings.max_subscribers,
        settings.events_heartbeat_seconds,
        feeds_redis=feeds_redis,
    )


def _provide_events(state: State) -> TableEvents:
    events: TableEvents = state.events
    return events


def _provide_sessions(state: State) -> SeedSessions:
    sessions: SeedSessions = state.sessions
    return sessions


def _provide_roller(request: Request[Any, Any, Any]) -> Roller:
    return Roller.of(request)
