"""Protection: a cost-weighted token bucket per client in Redis, and who the client is.

Each client has a bucket of ``limit`` tokens (``FAIRROLL_RATE_LIMIT``) that refills at
``limit`` tokens a minute, continuously; a request takes its cost (``cost_of``) or is
answered 429 with ``Retry-After`` (seconds until the bucket holds that cost again). So
no burst exceeds ``limit`` tokens, and no minute more than ``2 x limit`` (a fixed window
let twice the limit through across its edge, and counted nothing but POSTs):

==============================================  =====
a roll, a table or a seed session (POST)            1
an entry page                                       1
an odds request, an estimate                        4
an NDJSON export                                    5
a verification (a table, or an uploaded export)    10
==============================================  =====

Where a request carries a table's write key (``Authorization: Bearer``), that key has a
bucket of its own as well, and the request must fit both: a leaked key used from many
addresses is limited like one client. Each bucket is one hash, ``fairroll:rl:<client>``
(``tokens``, ``at`` in ms of Redis's own clock, so replicas with skewed clocks share one
bucket fairly), expiring once full again, and one Lua script takes a request from
every bucket it must fit or from none (``audit.redis.buckets``).
Off when the limit is 0 (the default, and in tests); when Redis does not answer, the
limiter lets the request through (a roll then answers 503 itself).

The client is the TCP peer's address. Behind N trusted proxies
(``FAIRROLL_TRUSTED_PROXY_HOPS``), it is the address N hops from the right of
``X-Forwarded-For``; with 0 (the default) that header is ignored, so it cannot
be spoofed.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Callable
from typing import Any, cast

from litestar.enums import ScopeType
from litestar.types import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
)
from redis.exceptions import RedisError

from fairroll.api.problems import problem, send_problem
from fairroll.api.services import served
from fairroll.audit.redis.buckets import take

__all__ = [
    "POLICY",
    "client_of",
    "cost_of",
    "quota_headers",
    "rate_limit",
    "request_timeout",
]


def cost_of(scope: Scope) -> int:
    """What a routed request costs (see the table above); 0 is free."""
    method = str(cast(dict[str, Any], scope).get("method", "GET"))
    template: str = scope.get("path_template") or scope["path"]
    if template.endswith("/odds"):
        return 4
    if template.endswith("/verification") or template == "/v1/verify":
        return 10
    if template.endswith("/export"):
        return 5
    if method == "POST" and template.startswith("/v1/"):
        return 1
    if template.endswith("/entries"):
        return 1
    return 0


def client_of(scope: Scope, trusted_hops: int) -> str:
    """The client address: the peer, or the one the trusted proxies saw."""
    client = scope.get("client")
    peer = str(client[0]) if client else "unknown"
    if trusted_hops <= 0:
        return peer
    forwarded = [
        part.strip()
        for name, value in scope["headers"]
        if name == b"x-forwarded-for"
        for part in value.decode("latin-1").split(",")
        if part.strip()
    ]
    if len(forwarded) < trusted_hops:
        return forwarded[0] if forwarded else peer
    return forwarded[-trusted_hops]


def rate_limit(app: ASGIApp) -> ASGIApp:
    """Litestar middleware (after routing, so the route template decides the cost)."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        services = served(scope["app"])
        limit = services.limits.rate_limit if services is not None else 0
        cost = cost_of(scope) if scope["type"] == ScopeType.HTTP and limit > 0 else 0
        if services is None or cost == 0:
            await app(scope, receive, send)
            return
        client = client_of(scope, services.limits.trusted_proxy_hops)
        bearer = _bearer(scope)
        # A write key's bucket is named by its hash: the key itself is never stored.
        hashed = [hashlib.sha256(bearer.encode()).hexdigest()[:32]] if bearer else []
        try:
            allowed, wait_ms, left = await take(
                services.store.redis, client, hashed, limit, min(cost, limit)
            )
        except RedisError:
            # The limiter fails open (rolls still need Redis and answer 503), and says
            # nothing of a quota it could not read.
            await app(scope, receive, send)
            return
        if allowed:
            await app(scope, receive, _with_quota(send, limit, left))
            return
        retry_after = max(1, math.ceil(wait_ms / 1000))
        await _too_many(_with_quota(send, limit, 0, retry_after), client, limit, cost, retry_after)

    return limited


def quota_headers(limit: int, left: int, reset: int | None = None) -> list[tuple[bytes, bytes]]:
    """The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, Structured Fields):
    the policy (``q`` tokens, refilled over ``w`` = 60 s) and what is left (``r``) and
    when the bucket is full again (``t`` seconds; for a refused request, when it may retry).

    >>> quota_headers(120, 60)
    [(b'ratelimit-policy', b'"fairroll";q=120;w=60'), (b'ratelimit', b'"fairroll";r=60;t=30')]
    """
    left = max(0, min(limit, left))
    if reset is None:
        reset = math.ceil((limit - left) * 60 / limit) if limit else 0
    return [
        (b"ratelimit-policy", f'"{POLICY}";q={limit};w=60'.encode()),
        (b"ratelimit", f'"{POLICY}";r={left};t={reset}'.encode()),
    ]


#: The name of the one quota policy (a token bucket per client, and per write key).
POLICY = "fairroll"


def _with_quota(send: Send, limit: int, left: int, reset: int | None = None) -> Send:
    extra = quota_headers(limit, left, reset)

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


def _bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            text = value.decode("latin-1")
            if text.lower().startswith("bearer "):
                return text[7:].strip() or None
    return None


async def _too_many(send: Send, client: str, limit: int, cost: int, retry_after: int) -> None:
    await send_problem(
        send,
        problem(
            429,
            "too-many-requests",
            "Too many requests",
            f"{client} has spent its {limit} requests a minute (this request costs {cost}); "
            f"retry in {retry_after} s",
            retry_after,
        ),
    )


def request_timeout(seconds: float) -> Callable[[ASGIApp], ASGIApp]:
    """ASGI middleware factory: a request that has not started its response within
    ``seconds`` is cancelled and answered 503 (a stuck dependency must not hold a
    worker). Once the response has started (a long NDJSON export), it is left alone."""

    def middleware(app: ASGIApp) -> ASGIApp:
        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or seconds <= 0:
                await app(scope, receive, send)
                return
            # One timer on this task (no extra task per request): the app is cancelled
            # at the deadline unless its response has started, which disarms the timer.
            deadline = asyncio.timeout(seconds)

            async def tracking_send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    deadline.reschedule(None)
                await send(message)

            try:
                async with deadline:
                    await app(scope, receive, tracking_send)
            except TimeoutError:
                if not deadline.expired():
                    raise  # raised by the app itself, not our deadline
                await _timed_out(send, seconds)

        return guarded

    return middleware


async def _timed_out(send: Send, seconds: float) -> None:
    await send_problem(
        send,
        problem(
            503,
            "timeout",
            "The request timed out",
            f"no answer within {seconds:g} s. A roll may have been recorded: retry with the "
            "same Idempotency-Key to get it, or the first one, never two.",
            1,
        ),
    )
