"""The domain series, registered once per process on the default Prometheus registry:
rolls and dice by mechanic, the audit append's time and errors, and the store's alarms
and state (fenced tables, durability, Redis memory)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

__all__ = [
    "AUDIT_APPEND_SECONDS",
    "AUDIT_ERRORS",
    "DICE",
    "DURABLE",
    "FENCED_TABLES",
    "HEAD_REGRESSIONS",
    "REDIS_MEMORY",
    "ROLLS",
]

ROLLS = Counter("fairroll_rolls", "Rolls resolved and recorded, by mechanic.", ["mechanic"])
DICE = Counter("fairroll_dice", "Dice rolled or adjudicated, by mechanic.", ["mechanic"])
AUDIT_APPEND_SECONDS = Histogram(
    "fairroll_audit_append_seconds",
    "Time to chain, sign and store one audit entry in Redis.",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
AUDIT_ERRORS = Counter(
    "fairroll_audit_errors", "Audit appends that failed: Redis unreachable or too busy."
)
HEAD_REGRESSIONS = Counter(
    "fairroll_audit_head_regressions",
    "Alarm: a table's log in Redis went back behind (or away from) an entry this process "
    "acknowledged or read; that table is stopped.",
)
FENCED_TABLES = Gauge(
    "fairroll_audit_fenced_tables",
    "Tables this process has stopped appending to because their log went back.",
    multiprocess_mode="livesum",
)
REDIS_MEMORY = Gauge(
    "fairroll_redis_memory_ratio",
    "used_memory / maxmemory of the audit store's fullest primary, read at each /readyz "
    "(absent without maxmemory). At 1 Redis refuses writes: rolls answer 503.",
    multiprocess_mode="max",
)
DURABLE = Gauge(
    "fairroll_audit_durable",
    "1 if the audit store acknowledges only appends on disk (waitaof or fsync-always).",
    multiprocess_mode="liveall",
)
