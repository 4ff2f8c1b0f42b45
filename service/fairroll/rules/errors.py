"""The one error type every rule raises when a request breaks the rules."""

from __future__ import annotations

__all__ = ["RuleError"]


class RuleError(ValueError):
    """A request the rules do not allow, with a message a player understands.

    ``field`` names the request field at fault (dotted path), so the HTTP layer
    can point at it.
    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field
