"""The Litestar application factory."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from litestar import Litestar, Request
from litestar.config.cors import CORSConfig
from litestar.datastructures import CacheControlHeader
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import License, Tag
from litestar.static_files import create_static_files_router
from litestar.types import ASGIApp, ControllerRouterHandler, Message, Scope, Send

import fairroll
from fairroll.api.compute.pool import ComputePool, compute_middleware
from fairroll.api.controllers.checkpoints import CheckpointsController
from fairroll.api.controllers.cosignatures import CosignaturesController
from fairroll.api.controllers.entries import EntriesController
from fairroll.api.controllers.integrations import IntegrationsController, integration_headers
from fairroll.api.controllers.keys import KeysController
from fairroll.api.controllers.log_tiles import LogTilesController
from fairroll.api.controllers.ops import HealthController, MetricsController
from fairroll.api.controllers.page import DocsController, PageController
from fairroll.api.controllers.sealed import SealedController
from fairroll.api.controllers.seeds import SeedSessionsController
from fairroll.api.controllers.systems import SystemsController, system_routers, system_tags
from fairroll.api.controllers.tables import NewTableController
from fairroll.api.controllers.verify import TableVerificationController, VerifyController
from fairroll.api.controllers.verify_page import VerifyPageController
from fairroll.api.dependencies import DEPENDENCIES
from fairroll.api.direct import DirectRoutes
from fairroll.api.headers import DocsPage, security_headers
from fairroll.api.lifespan import lifespan
from fairroll.api.limits import refusal
from fairroll.api.metrics import http_metrics
from fairroll.api.problems import exception_handlers, send_problem
from fairroll.api.protection import rate_limit, request_timeout
from fairroll.api.services import services_of
from fairroll.api.settings import Settings
from fairroll.api.strict import StrictDecoders, strict_body
from fairroll.api.wiring import server_signer
from fairroll.mechanics import System, import_systems, ordered
from fairroll.page import STATIC
from fairroll.spec.examples import attach_examples
from fairroll.spec.openapi import (
    FinishedDocument,
    declare_closed_objects,
    declare_head_limits,
    declare_integer_bounds,
    declare_links,
    declare_ndjson,
    declare_response_fields,
    declare_roll_headers,
    publish,
)

__all__ = ["create_app", "create_app_from_env"]

#: Tags of the endpoints that are not a rule system's (each system tags its own).
SERVICE_TAGS = [
    Tag(name="systems", description="The rule systems and mechanics this server resolves."),
    Tag(name="audit", description="The signed, hash-chained roll log of each table."),
    Tag(name="operations", description="Health probes for orchestrators."),
    Tag(name="integrations", description="The VTT integrations this server ships."),
]


class FairrollApp(Litestar):
    """Litestar, with what every response needs, before routing (so 404s and 405s too):

    - the limits on a request's head (``api.limits``: 431, 414) before anything reads it;
    - the security headers (``api.headers``) on every HTTP response;
    - ``HEAD`` answered on every ``GET`` route: the same status and headers
      (``Content-Length`` included), no body, as RFC 9110 asks of a server;
    - ``OPTIONS`` on a path with several methods names them all in ``Allow`` (Litestar
      2 names only the first: litestar-org/litestar#4169, fixed in 3).
    """

    #: Set by ``create_app`` from the settings.
    headers_for: Callable[[str], list[tuple[bytes, bytes]]]
    #: The roll routes, answered below Litestar's handler machinery (``api.direct``).
    direct: DirectRoutes | None = None
    #: Paths with several methods, as patterns, and the ``Allow`` they answer OPTIONS with.
    allows: tuple[tuple[re.Pattern[str], bytes], ...] = ()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        extra = self.headers_for(scope["path"])
        refused = refusal(scope)
        if refused is not None:  # a head too large: nothing is read, routed or recorded
            status, headers, body = refused
            await send_problem(send, (status, [*headers, *extra], body))
            return
        method = scope["method"]
        allow = self._allow(scope["path"]) if method == "OPTIONS" else None
        send = _with_headers(send, extra, allow)
        if method == "HEAD":
            as_get: Any = {**scope, "method": "GET"}
            await super().__call__(as_get, receive, _without_body(send))
        elif self.direct is not None and (found := self.direct.of(scope)) is not None:
            scope["app"] = scope["litestar_app"] = self
            scope.setdefault("state", {})
            await self.direct(found, scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    def _allow(self, path: str) -> bytes | None:
        for pattern, allow in self.allows:
            if pattern.match(path):
                return allow
        return None

    def learn_allows(self) -> None:
        """Note the paths that answer several methods (from the app's routes)."""
        found = []
        for found_route in self.routes:
            methods = {m.upper() for m in found_route.methods} - {"HEAD", "OPTIONS"}
            if len(methods) > 1:
                template = re.sub(r"\{[^/}]+\}", "[^/]+", found_route.path)
                allow = ", ".join(sorted({*methods, "OPTIONS"})).encode()
                found.append((re.compile(f"^{template}$"), allow))
        self.allows = tuple(found)


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]], allow: bytes | None) -> Send:
    """``send``, adding the headers every response carries, and naming every method of
    the path in the ``Allow`` of an answer to OPTIONS (``allow``: None for another)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", []), *extra]
            if allow is not None:
                headers = [(k, allow if k.lower() == b"allow" else v) for k, v in headers]
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _without_body(send: Send) -> Send:
    """``send`` for a HEAD answered as its GET: the status and the headers
    (``Content-Length`` included), one empty body."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return sending


def create_app(settings: Settings) -> Litestar:
    """Build the app. Redis is opened on startup and closed on shutdown (``lifespan``)."""
    import_systems(settings.systems)
    systems = ordered()
    signer = server_signer(settings)
    app = FairrollApp(
        route_handlers=_routes(systems),
        dependencies=DEPENDENCIES,
        lifespan=[lifespan(settings, signer)],
        middleware=_middleware(settings),
        exception_handlers=exception_handlers,
        before_request=_before_request,
        cors_config=_cors(settings),
        request_max_body_size=settings.max_body_bytes,
        openapi_config=_openapi(systems),
    )
    # A compute worker's answers are relayed by the service, which adds the headers once.
    app.headers_for = (
        _no_headers
        if settings.compute_worker
        else integration_headers(
            security_headers(settings.frame_ancestors, settings.mirror_origins),
            settings.frame_ancestors,
        )
    )
    app.state.public_url = settings.public_url
    app.state.decoders = StrictDecoders(app)
    app.direct = DirectRoutes(app)
    app.learn_allows()
    _document(app)
    return app


def _routes(systems: list[System]) -> list[ControllerRouterHandler]:
    return [
        *system_routers(systems),
        SystemsController,
        NewTableController,
        EntriesController,
        SeedSessionsController,
        SealedController,
        CheckpointsController,
        TableVerificationController,
        CosignaturesController,
        LogTilesController,
        KeysController,
        VerifyController,
        HealthController,
        MetricsController,
        PageController,
        DocsController,
        IntegrationsController,
        VerifyPageController,
        # The in-page verifier (verify.js): VTT plugins and pages import it from here.
        create_static_files_router(
            path="/static",
            directories=[STATIC],
            cache_control=CacheControlHeader(max_age=300, public=True),
        ),
    ]


def _cors(settings: Settings) -> CORSConfig | None:
    if not settings.cors_origins:
        return None
    return CORSConfig(
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        # Last-Event-ID: an event stream resumed from another origin (EventSource too).
        allow_headers=[
            "Authorization",
            "Content-Type",
            "Fairroll-Session-Token",
            "Idempotency-Key",
            "If-None-Match",
            "Last-Event-ID",
        ],
        # What a plugin reads: the entity tag to revalidate, and the quota it has left.
        expose_headers=["ETag", "RateLimit", "RateLimit-Policy", "Retry-After"],
    )


def _openapi(systems: list[System]) -> OpenAPIConfig:
    return OpenAPIConfig(
        # Generators name a client after the title (openapi-python-client: "<title> client"):
        # "fairroll HTTP" gives fairroll-http-client, never the official fairroll-client.
        title="fairroll HTTP",
        version=fairroll.__version__,
        description=(
            "Verifiable dice for tabletop systems. Every roll is replayable from its seed "
            "and recorded in a hash-chained, Ed25519-signed audit trail before it is answered. "
            "Official clients: fairroll-client (PyPI) and @fairroll/client (npm); a client "
            "generated from this document takes another name (docs/openapi.md)."
        ),
        tags=[*system_tags(systems), *SERVICE_TAGS],
        license=License(name="MIT", identifier="MIT"),
        path="/schema",
        use_handler_docstrings=False,
        render_plugins=[DocsPage(), FinishedDocument()],
    )


def _document(app: Litestar) -> None:
    """What the OpenAPI document says beyond Litestar's own reading of the routes."""
    declare_closed_objects(app)
    declare_response_fields(app)
    declare_integer_bounds(app)
    declare_roll_headers(app)
    declare_head_limits(app)
    declare_links(app)
    declare_ndjson(app)
    attach_examples(app)
    publish(app)


def create_app_from_env() -> Litestar:
    """Factory for ASGI servers: settings from the environment."""
    return create_app(Settings.from_env())


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
    return services_of(scope["app"]).compute


async def _before_request(request: Request[Any, Any, Any]) -> None:
    await strict_body(request)
