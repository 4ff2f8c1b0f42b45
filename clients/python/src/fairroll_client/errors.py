"""What a call can end in besides an answer: the server refused it, the answer does not
hold, or the session cannot go on without the player's say."""

from __future__ import annotations

from typing import Any

__all__ = ["FairrollError", "NonceRefusedError", "SessionClosedError", "UnfairRollError"]


class FairrollError(Exception):
    """A refused call: ``status`` and the RFC 9457 ``problem`` the server answered."""

    def __init__(self, status: int, problem: Any) -> None:
        detail = problem.get("detail") if isinstance(problem, dict) else problem
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.problem = problem


class UnfairRollError(Exception):
    """An answer that does not follow from the committed chain, or that the log does not
    hold as answered: keep it (``answer``), it is evidence."""

    def __init__(self, reason: str, answer: Any) -> None:
        super().__init__(reason)
        self.answer = answer


class SessionClosedError(FairrollError):
    """The seed session cannot take this roll: revealed, missing (404), or its chain used
    up with no next chain committed. The client never opens a fresh session in its place
    on its own (a new session would give the server a new draw at the same roll): start
    one on purpose, ``Fairroll.session(table, new=True)``, and tell the player why."""


class NonceRefusedError(FairrollError):
    """The server kept refusing the roll at the nonce this client sent, and no roll holds
    that nonce in the log: nothing was rolled; the server may refuse, never re-roll."""
