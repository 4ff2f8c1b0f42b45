"""The audit store an operator command writes with: the server's own (``api.wiring``),
so what the command signs carries the server's log name, key, replicas and durability."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairroll.audit import AuditStore

__all__ = ["OPERATOR_TIMEOUT", "operator_store"]

#: Seconds a Redis command of an operator command may take: one long command (a page
#: of a table's log, a trim), not a request's.
OPERATOR_TIMEOUT = 10.0


def operator_store() -> AuditStore | int:
    """The audit store named by REDIS_URL (or the Sentinels), as the server builds it
    from the same settings; or the exit status 2 with a message, without REDIS_URL or
    with a signing key that cannot be loaded."""
    from fairroll.api.settings import Settings  # noqa: PLC0415
    from fairroll.api.wiring import SignerError, audit_store, server_signer  # noqa: PLC0415

    if not (os.environ.get("REDIS_URL") or os.environ.get("FAIRROLL_SENTINELS")):
        print("error: set REDIS_URL to the audit store", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    try:
        signer = server_signer(settings)
    except SignerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return audit_store(settings, signer, timeout=OPERATOR_TIMEOUT)
