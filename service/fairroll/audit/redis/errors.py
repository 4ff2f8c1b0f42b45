"""What an append or a read of the store can fail with. The web layer maps each to its
answer (``docs/operations.md`` names them); none of them means a stored entry changed."""

from __future__ import annotations

__all__ = [
    "AlreadyRecordedError",
    "AppendConflictError",
    "ClaimRefusedError",
    "KeyRetiredError",
    "NotDurableError",
    "StoreFullError",
    "StoreUnavailableError",
    "TableFencedError",
]


class StoreUnavailableError(Exception):
    """Redis could not be reached or answered with an error.

    ``recorded`` is None where the roll may have been recorded (a timeout after the
    script was sent, or a durability confirmation that did not come), False where it
    certainly was not."""

    def __init__(self, message: str, *, recorded: bool | None = False) -> None:
        super().__init__(message)
        self.recorded = recorded


class AppendConflictError(StoreUnavailableError):
    """Other writers kept moving the head; the entry was not appended."""


class NotDurableError(StoreUnavailableError):
    """Redis answered, but it acknowledges appends that are not on disk (no AOF, or not
    ``appendfsync always`` without WAITAOF): nothing is appended (``recorded`` is False)
    until its configuration is mended; a retry alone cannot help."""


class KeyRetiredError(StoreUnavailableError):
    """This server's signing key was retired (``fairroll retire-key``): it appends
    nothing (``recorded`` is False) until the operator deploys the new key. Redis
    answered; a retry cannot help."""


class StoreFullError(StoreUnavailableError):
    """Redis is nearly at its ``maxmemory``: the append was refused before it wrote
    anything (``recorded`` is False), so no write can fail half-way."""


class TableFencedError(StoreUnavailableError):
    """The table's log in Redis went back behind, or away from, an entry this process
    acknowledged or read: appending would re-issue or fork acknowledged seqs."""


class ClaimRefusedError(Exception):
    """A draft's seed-session claim was refused by the append: nothing was stored.
    ``why``: ``unknown`` (no such session), ``exists`` (a commitment's id is taken),
    ``revealed`` (closed to rolls), ``spent`` (a hash-chain session's chain is used up:
    renew it first), ``moved`` (another roll took the nonce, or another process renewed
    the chain; the session is at ``nonce``) or ``reused`` (the roll's client seed was used
    on the table at seq ``first_use``, before its chain was committed at seq ``chain``, or
    on another chain: then ``first_use`` is not below ``chain``)."""

    def __init__(self, why: str, nonce: int, *, first_use: int = 0, chain: int = 0) -> None:
        super().__init__(f"seed session claim refused: {why} (at nonce {nonce})")
        self.why = why
        self.nonce = nonce
        self.first_use = first_use
        self.chain = chain


class AlreadyRecordedError(Exception):
    """The roll's Idempotency-Key was already used by a recorded roll: nothing was stored.
    ``marker`` is what the key holds, ``done:<fingerprint>:<seq>``."""

    def __init__(self, marker: str) -> None:
        super().__init__(marker)
        self.marker = marker
