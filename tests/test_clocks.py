"""Time-dependent rules read Redis's clock, not one server's.

Issue 39 ran servers under faketime: one a day fast revealed every open session "by
expiry" as it started; one ten minutes slow refused every honest cosignature. A session's
last use is stamped with Redis's time and the sweep measures idleness by it; a
cosignature's time is held to Redis's clock (within ``SKEW_SECONDS``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from redis.asyncio import Redis as AsyncRedis

from fairroll.api.lifespan import sweep_once
from fairroll.audit import AuditStore
from fairroll.audit.sessions import SeedSessions
from fairroll.audit.signing import load_signer
from fairroll.redis_server import RedisServer
from support import TEST_SIGNING_KEY

DAY = 24 * 3600.0


def shifted(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """This process's wall clock moved by ``seconds`` (Redis's is not)."""
    real: Callable[[], float] = time.time
    monkeypatch.setattr(time, "time", lambda: real() + seconds)


async def open_and_sweep(url: str, table: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Open a session on a right clock; sweep it on a server a day fast: revealed?"""
    redis = AsyncRedis.from_url(url)
    signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    try:
        store = AuditStore(redis, signer)
        sessions = SeedSessions(store)
        status = await sessions.create(table)
        fast = AuditStore(AsyncRedis.from_url(url), signer)
        shifted(monkeypatch, DAY + 60)
        try:
            await sweep_once(SeedSessions(fast), fast.watch)
            after = await SeedSessions(fast).status(table, status.seed_id)
        finally:
            await fast.redis.aclose()
        return after.revealed
    finally:
        await redis.aclose()


def test_a_server_a_day_fast_expires_no_session(
    redis_server: RedisServer, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert asyncio.run(open_and_sweep(redis_server.url, table, monkeypatch)) is False


def test_redis_time_is_the_clock_of_a_skewed_server(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def measured() -> float:
        redis = AsyncRedis.from_url(redis_server.url)
        signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
        try:
            store = AuditStore(redis, signer)
            shifted(monkeypatch, -600)  # ten minutes slow
            await store.probe_durability()
            return store.watch.redis_time()
        finally:
            await redis.aclose()

    real = time.time()
    assert abs(asyncio.run(measured()) - real) < 5
