"""Operational endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import msgspec
from litestar import Controller, get
from litestar.exceptions import ServiceUnavailableException
from litestar.plugins.prometheus import PrometheusController
from redis.exceptions import RedisError

from fairroll.api.problems import problem_responses
from fairroll.audit import AuditStore

__all__ = ["HealthController", "MetricsController"]


class Health(msgspec.Struct, frozen=True, kw_only=True):
    status: str


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
    async def readyz(self, store: AuditStore) -> Health:
        try:
            await store.redis.ping()
        except RedisError as exc:
            raise ServiceUnavailableException("the audit store (Redis) is unreachable") from exc
        return Health(status="ok")


class MetricsController(PrometheusController):
    path = "/metrics"
    include_in_schema = False
