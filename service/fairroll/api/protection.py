"""Protection: a per-client rate limit in Redis, and who the client is behind proxies.

The limit is a fixed one-minute window per client: ``INCR`` of
``fairroll:rl:<client>:<minute>`` (expiring with the window). Over the limit a
request is answered 429 with ``Retry-After`` (seconds to the next window). It
covers the ``POST /v1/...`` operations (rolls, odds, sheets); reads are not
limited. Off when the limit is 0 (the default, and in tests).

The client is the TCP peer's address. Behind N trusted proxies
(``FAIRROLL_TRUSTED_PROXY_HOPS``), it is the address N hops from the right of
``X-Forwarded-For``; with 0 (the default) that header is ignored, so it cannot
be spoofed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import msgspec
from litestar import Request
from litestar.enums import ScopeType
from litestar.exceptions import TooManyRequestsException
from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Message,
    Receive,
    Scope,
    Send,
)
from redis.exceptions import RedisError

__all__ = ["client_of", "rate_limit", "request_timeout"]

WINDOW = 60


def client_of(request: Request[Any, Any, Any], trusted_hops: int) -> str:
    """The client address: the peer, or the one the trusted proxies saw."""
    peer = request.client.host if request.client else "unknown"
    if trusted_hops <= 0:
        return peer
    forwarded = [
        part.strip()
        for header in request.headers.getall("x-forwarded-for", [])
        for part in header.split(",")
        if part.strip()
    ]
    if len(forwarded) < trusted_hops:
        return forwarded[0] if forwarded else peer
    return forwarded[-trusted_hops]


async def rate_limit(request: Request[Any, Any, Any]) -> None:
    """``before_request`` part: count this client's POSTs in the current minute."""
    state = request.app.state
    limit: int = state.rate_limit
    if limit <= 0 or request.method != "POST":
        return
    client = client_of(request, state.trusted_proxy_hops)
    now = time.time()
    window = int(now // WINDOW)
    key = f"fairroll:rl:{client}:{window}"
    try:
        async with state.redis.pipeline(transaction=False) as pipe:
            pipe.incr(key)
            pipe.expire(key, WINDOW + 1)
            count, _ = await pipe.execute()
    except RedisError:
        return  # the limiter fails open; rolls still need Redis and answer 503 themselves
    if count > limit:
        retry_after = max(1, int((window + 1) * WINDOW - now))
        raise TooManyRequestsException(
            f"more than {limit} requests a minute from {client}; retry in {retry_after} s",
            headers={"Retry-After": str(retry_after)},
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
    body = msgspec.json.encode(
        {
            "type": "urn:fairroll:problem:timeout",
            "title": "The request timed out",
            "status": 503,
            "detail": f"no answer within {seconds:g} s; nothing was acknowledged. Retry.",
        }
    )
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": 503,
        "headers": [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", b"1"),
        ],
    }
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(start)
    await send(end)
