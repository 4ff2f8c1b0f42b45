"""Domain metrics, registered once per process on the default Prometheus registry."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

__all__ = ["AUDIT_APPEND_SECONDS", "AUDIT_ERRORS", "DICE", "ROLLS"]

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
