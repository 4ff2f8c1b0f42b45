"""Metrics, registered once per process on the default Prometheus registry.

The HTTP metrics (the domain series are ``play.metrics``'s), which keep the
names and labels of Litestar's Prometheus plugin (``fairroll_http_requests_total``
by app_name, method, route template, status code ...). The plugin's middleware cost
more than a roll's own framework does (``docs/performance.md``): a ``Request`` object,
label dicts and a ``labels()`` lookup per metric each time; ``http_metrics`` keeps the
label children it has seen and does the same accounting for far less.
"""

from __future__ import annotations

import time

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import Counter, Gauge, Histogram

__all__ = ["http_metrics"]

APP_NAME = "fairroll"
_LABELS = ["app_name", "method", "path", "status_code"]
HTTP_REQUESTS = Counter("fairroll_http_requests", "Total requests", _LABELS)
HTTP_ERRORS = Counter("fairroll_http_requests_error", "Total errors in requests", _LABELS)
HTTP_SECONDS = Histogram(
    "fairroll_http_request_duration_seconds", "Request duration, in seconds", _LABELS
)
HTTP_IN_PROGRESS = Gauge(
    "fairroll_http_requests_in_progress",
    "Total requests currently in progress",
    ["app_name", "method", "path"],
    multiprocess_mode="livesum",
)
#: Paths kept out of the HTTP metrics (the scrape itself, the docs).
EXCLUDED = ("/metrics", "/schema")

_Children = tuple[Counter, Histogram, Counter | None]
_children: dict[tuple[str, str, int], _Children] = {}
_gauges: dict[tuple[str, str], Gauge] = {}


def _series(method: str, path: str, status: int) -> _Children:
    found = _children.get((method, path, status))
    if found is None:
        values = (APP_NAME, method, path, str(status))
        errors = HTTP_ERRORS.labels(*values) if status >= 500 else None
        found = (HTTP_REQUESTS.labels(*values), HTTP_SECONDS.labels(*values), errors)
        _children[(method, path, status)] = found
    return found


def _in_progress(method: str, path: str) -> Gauge:
    gauge = _gauges.get((method, path))
    if gauge is None:
        gauge = _gauges[(method, path)] = HTTP_IN_PROGRESS.labels(APP_NAME, method, path)
    return gauge


def http_metrics(app: ASGIApp) -> ASGIApp:
    """ASGI middleware (after routing: the route template is in the scope)."""

    async def measured(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path_template") or scope["path"]
        if scope["type"] != ScopeType.HTTP or path.startswith(EXCLUDED):
            await app(scope, receive, send)
            return
        method = scope["method"]
        started = time.perf_counter()
        status = 200
        finished = started

        async def measured_send(message: Message) -> None:
            nonlocal status, finished
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                finished = time.perf_counter()
            await send(message)

        gauge = _in_progress(method, path)
        gauge.inc()
        try:
            await app(scope, receive, measured_send)
        finally:
            gauge.dec()
            count, seconds, errors = _series(method, path, status)
            count.inc()
            seconds.observe(finished - started)
            if errors is not None:
                errors.inc()

    return measured
