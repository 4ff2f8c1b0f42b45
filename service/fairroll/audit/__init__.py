"""The hash-chained, signed roll log: entry format, signing, Redis store, verifier."""

from fairroll.audit.checkpoint import Checkpoint, verify_checkpoint
from fairroll.audit.entry import Draft, Entry, Head, Session, Source
from fairroll.audit.signing import PublicKey, Signer, load_signer
from fairroll.audit.store import (
    AnyRedis,
    AppendConflictError,
    AuditStore,
    StoreUnavailableError,
    connect_redis,
)
from fairroll.audit.verify import Trust, VerifyReport, verify_entries

__all__ = [
    "AnyRedis",
    "AppendConflictError",
    "AuditStore",
    "Checkpoint",
    "Draft",
    "Entry",
    "Head",
    "PublicKey",
    "Session",
    "Signer",
    "Source",
    "StoreUnavailableError",
    "Trust",
    "VerifyReport",
    "connect_redis",
    "load_signer",
    "verify_checkpoint",
    "verify_entries",
]
