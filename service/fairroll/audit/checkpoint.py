"""Signed checkpoints: a table's size and head hash at a moment, signed by the server.

In the style of Certificate Transparency's signed tree heads and the C2SP
``tlog-checkpoint`` note: a short text body, then a signature line::

    fairroll/<table>
    <size>
    <head entry_hash, hex>
    <time, RFC 3339>

    — fairroll <key_id> <base64 Ed25519 signature of "fairroll/checkpoint/v1\\n" + body>

Anyone who kept a checkpoint (or a receipt) can later check that the table still
holds that entry at that seq: a rewritten, truncated or forked table cannot.
"""

from __future__ import annotations

import base64

import msgspec

from fairroll.audit.entry import Head, now_rfc3339
from fairroll.audit.signing import Signer, verify_message

__all__ = [
    "CHECKPOINT_CONTEXT",
    "Checkpoint",
    "checkpoint_body",
    "sign_checkpoint",
    "verify_checkpoint",
]

CHECKPOINT_CONTEXT = b"fairroll/checkpoint/v1\n"


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A signed statement: ``table`` had ``size`` entries, the last with ``head_hash``."""

    table: str
    size: int
    head_hash: str
    time: str
    key_id: str
    signature: str
    text: str


def checkpoint_body(table: str, size: int, head_hash: str, time: str) -> str:
    return f"fairroll/{table}\n{size}\n{head_hash}\n{time}\n"


def sign_checkpoint(signer: Signer, table: str, head: Head, time: str | None = None) -> Checkpoint:
    time = time or now_rfc3339()
    body = checkpoint_body(table, head.seq, head.entry_hash, time)
    signature = signer.sign_message(CHECKPOINT_CONTEXT + body.encode())
    return Checkpoint(
        table=table,
        size=head.seq,
        head_hash=head.entry_hash,
        time=time,
        key_id=signer.key_id,
        signature=signature,
        text=f"{body}\n\u2014 fairroll {signer.key_id} {signature}\n",
    )


def verify_checkpoint(checkpoint: Checkpoint, public_key_b64: str) -> bool:
    """True when the checkpoint's signature verifies under the key."""
    body = checkpoint_body(checkpoint.table, checkpoint.size, checkpoint.head_hash, checkpoint.time)
    try:
        signature = base64.b64decode(checkpoint.signature, validate=True)
    except ValueError:
        return False
    return verify_message(public_key_b64, CHECKPOINT_CONTEXT + body.encode(), signature)
