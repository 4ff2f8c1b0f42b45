"""Operational endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import msgspec
from litestar import Controller, get
from litestar.exceptions import ServiceUnavailableException
from litestar.plugins.prometheus import PrometheusController
from redis.exceptions import RedisError

from fairroll.api.problems import problem_responses
from fairroll.api.services import Services
from fairroll.audit import AuditStore
from fairroll.audit.redis.append import FULL_RATIO
from fairroll.play.metrics import DURABLE, REDIS_MEMORY

__all__ = ["HealthController", "MetricsController"]

#: How far below the share of maxmemory where appends are refused ``/readyz`` already
#: says "nearly full" (a load balancer stops sending rolls first).
READY_MARGIN = 0.02


class Health(msgspec.Struct, frozen=True, kw_only=True):
    status: str


class Readiness(msgspec.Struct, frozen=True, kw_only=True):
    """Ready: Redis answers and acknowledges appends only once they are durable."""

    status: str
    #: ``waitaof``, ``fsync-always`` or ``unsafe`` (see docs/operations.md).
    durability: str
    redis_version: str
    replicas: int
    detail: str
    #: Tables this process stopped because their log went back (see docs/operations.md).
    fenced_tables: int
    #: Redis used_memory / maxmemory (absent or None without maxmemory): alert well before 1.
    redis_memory_ratio: float | None = None


class HealthController(Controller):
    path = "/"
    tags = ("operations",)

    @get("/livez", operation_id="livez", summary="Liveness: the process answers")
    async def livez(self) -> Health:
        return Health(status="ok")

    @get(
        "/readyz",
        operation_id="readyz",
        summary="Readiness: the audit store (Redis) answers",
        responses=problem_responses(503),
    )
    async def readyz(self, store: AuditStore, services: Services) -> Readiness:
        pool = services.compute
        if pool is not None and not pool.started:
            raise ServiceUnavailableException("the calculation workers are starting")
        try:
            durability = await store.probe_durability()
        except RedisError as exc:
            raise ServiceUnavailableException("the audit store (Redis) is unreachable") from exc
        DURABLE.set(1 if durability.mode != "unsafe" else 0)
        if durability.memory_ratio is not None:
            REDIS_MEMORY.set(durability.memory_ratio)
        if not durability.accepted:
            raise ServiceUnavailableException(
                f"the audit store is not durable: {durability.detail}"
            )
        if await store.key_retired():
            raise ServiceUnavailableException(
                "this server's signing key was retired (fairroll retire-key): it appends "
                "nothing until the operator deploys the new key"
            )
        ratio = durability.memory_ratio
        if ratio is not None and ratio >= FULL_RATIO - READY_MARGIN:
            raise ServiceUnavailableException(
                f"the audit store is nearly full ({ratio:.0%} of maxmemory): rolls are "
                "refused until old entries are archived (fairroll archive) or Redis has more "
                "memory"
            )
        return Readiness(
            status="ok",
            durability=durability.mode,
            redis_version=durability.redis_version,
            replicas=durability.replicas,
            detail=durability.detail,
            fenced_tables=len(store.fenced),
            redis_memory_ratio=durability.memory_ratio,
        )


class MetricsController(PrometheusController):
    path = "/metrics"
    include_in_schema = False
