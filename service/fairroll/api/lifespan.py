"""What a process opens at startup and closes at shutdown: Redis, the audit store, seed
sessions, live events, the compute pool and the session sweeper; the handlers are given
them as one typed value (``api.services``, through ``dependencies``)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress

from litestar import Litestar
from redis.exceptions import RedisError

from fairroll.api.compute.pool import ComputePool
from fairroll.api.services import Services, TableRules
from fairroll.api.settings import Settings
from fairroll.api.wiring import audit_store, limits_of, witnesses_of
from fairroll.api.witnesses import witnessing
from fairroll.audit import AuditStore, Signer, connect_redis
from fairroll.audit.redis.durability import PROBE_SECONDS, Durability, DurabilityWatch
from fairroll.audit.sessions import IDLE_SECONDS, SWEEP_BATCH, SeedSessions
from fairroll.play.events import BLOCK_MS, TableEvents
from fairroll.play.metrics import DURABLE, FENCED_TABLES, HEAD_REGRESSIONS, REDIS_MEMORY

__all__ = ["SWEEP_SECONDS", "lifespan", "sweep_once"]

SWEEP_SECONDS = 60.0

_log = logging.getLogger("fairroll.audit")

Lifespan = Callable[[Litestar], AbstractAsyncContextManager[None]]


def lifespan(settings: Settings, signer: Signer) -> Lifespan:
    """The app's lifespan under ``settings``, signing with ``signer``."""

    @asynccontextmanager
    async def running(app: Litestar) -> AsyncIterator[None]:
        store = await _open_store(settings, signer)
        # Everything built at startup (modules, the OpenAPI document, msgspec types) lives
        # as long as the process: keep it out of the collector's full passes, which
        # otherwise stall requests (docs/performance.md, "the collector").
        gc.collect()
        gc.freeze()
        sessions = SeedSessions(store)
        events = _table_events(settings, store)
        pool = await _start_pool(settings)
        app.state.services = Services(
            store=store,
            sessions=sessions,
            events=events,
            compute=pool,
            limits=limits_of(settings),
            tables=TableRules(
                default_table_open=settings.default_table_open,
                require_tables=settings.require_tables,
                session_tokens=settings.session_tokens,
            ),
        )
        sweeper = (
            None
            if settings.compute_worker
            else asyncio.ensure_future(_sweep(sessions, store.watch))
        )
        prober = (
            None if settings.compute_worker else asyncio.ensure_future(_probe_durability(store))
        )
        witnesses = [] if settings.compute_worker else witnesses_of(settings)
        try:
            async with witnessing(store, witnesses, settings.witness_seconds):
                yield
        finally:
            for task in (sweeper, prober):
                if task is not None:
                    task.cancel()
                    with suppress(asyncio.CancelledError):
                        await task
            if pool is not None:
                await pool.close()
            await events.close()
            await store.redis.aclose()

    return running


async def _open_store(settings: Settings, signer: Signer) -> AuditStore:
    # A compute worker only reads, so it may retry a command on a dropped connection.
    store = audit_store(
        settings,
        signer,
        retries=2 if settings.compute_worker else 0,
        on_fence=_alarm,
        on_durability=_durability_metrics,
    )
    try:  # else published on the first append; /readyz tells
        if not settings.compute_worker:  # a worker signs nothing: its key is no key
            await store.publish_key()
        durability = await store.probe_durability()
        await store.keyring.refresh()
    except RedisError as unreachable:
        _log.warning(
            "the audit store (Redis) did not answer at startup: %s; rolls answer 503 "
            "until it does (/readyz says so)",
            unreachable,
        )
    else:
        _log.info("the audit store (Redis) answered: %s", durability.detail)
        if not durability.accepted:
            _log.error("rolls are refused: %s", durability.detail)
        if store.keyring.own_retired:
            _log.error(
                "this server's signing key %s was retired: it signs no more entries; "
                "deploy the new key (FAIRROLL_SIGNING_KEY and FAIRROLL_KEY_CERTIFICATE)",
                signer.key_id,
            )
    return store


async def _start_pool(settings: Settings) -> ComputePool | None:
    if settings.compute_workers <= 0:
        return None
    pool = ComputePool(settings.compute_workers, settings.compute_timeout_seconds)
    await pool.start()
    return pool


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


async def _sweep(sessions: SeedSessions, clock: DurabilityWatch) -> None:
    """Reveal seed sessions idle for a day, once a minute (every process: it is idempotent)."""
    while True:
        with suppress(RedisError):
            await sweep_once(sessions, clock)
        await asyncio.sleep(SWEEP_SECONDS)


async def sweep_once(sessions: SeedSessions, clock: DurabilityWatch) -> int:
    """Reveal the sessions idle for ``IDLE_SECONDS`` by Redis's clock, which stamps their
    last use (``DurabilityWatch.redis_time``): a server whose own clock is a day fast
    reveals nothing early. Nothing is swept until that clock was measured."""
    if clock.clock_offset is None:
        await clock.probe()
    offset = clock.clock_offset or 0.0
    revealed = 0
    while True:
        done = await sessions.sweep(idle_seconds=IDLE_SECONDS + offset)
        revealed += done
        if done < SWEEP_BATCH:
            return revealed


def _durability_metrics(durability: Durability) -> None:
    """Every probe of Redis's durability (at startup, before a round when the last probe
    is old, at /readyz, and every ``PROBE_SECONDS`` in the background) sets the gauges:
    an alert on ``fairroll_audit_durable`` means what Redis says now, not what it said at
    the last /readyz."""
    DURABLE.set(1 if durability.mode != "unsafe" else 0)
    if durability.memory_ratio is not None:
        REDIS_MEMORY.set(durability.memory_ratio)


async def _probe_durability(store: AuditStore) -> None:
    """Ask Redis about its durability every ``PROBE_SECONDS``, rolls or none."""
    while True:
        await asyncio.sleep(PROBE_SECONDS)
        try:
            await store.probe_durability()
        except RedisError as unreachable:
            _log.warning("the audit store (Redis) did not answer a probe: %s", unreachable)


def _alarm(table: str, acknowledged: int, seen: int) -> None:
    """A table's log went back (the store has stopped it and logged both seqs)."""
    HEAD_REGRESSIONS.inc()
    FENCED_TABLES.inc()
