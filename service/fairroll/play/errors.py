"""What play refuses, in its own words; the HTTP adapter maps each to a status
(``api.problems``). Nothing was rolled or recorded when one is raised."""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "KeyRefusedError",
    "KeyRequiredError",
    "NonceConflictError",
    "NotFoundError",
    "PlayError",
]


class PlayError(Exception):
    """A request play cannot serve as asked."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFoundError(PlayError):
    """No such table (where only created tables take rolls) or seed session."""


class KeyRequiredError(PlayError):
    """The table has a write key and the request sent none."""


class KeyRefusedError(PlayError):
    """The request's key is not the table's write key, or the table is closed."""


class ConflictError(PlayError):
    """The request conflicts with what the table already holds: a revealed session, an
    Idempotency-Key used for another request."""


class NonceConflictError(ConflictError):
    """The caller expected another nonce than the one its roll would take; ``nonce`` is
    the right one."""

    def __init__(self, seed_id: str, expected: int, nonce: int) -> None:
        super().__init__(
            f"seed session {seed_id} is at nonce {nonce}, not {expected}: nothing was "
            f"rolled; roll again with nonce {nonce} (or without one)"
        )
        self.nonce = nonce
