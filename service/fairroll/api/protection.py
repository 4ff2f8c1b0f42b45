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

import time
from typing import Any

from litestar import Request
from litestar.exceptions import TooManyRequestsException
from redis.exceptions import RedisError

__all__ = ["client_of", "rate_limit"]

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
