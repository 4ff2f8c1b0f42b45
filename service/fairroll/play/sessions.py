"""A seed session belongs to its player: bound at opening, shown on every later call.

Opening a session answers, once, its ``token`` (``audit.sessions``; Redis keeps only
its SHA-256). That token is the player's credential: a roll in the session and its
reveal show it in the ``Fairroll-Session-Token`` header. A session's ``seed_id`` is
public (its ``session.commit`` entry is in the log), so without this a stranger who
read it could roll in alice's session, then reveal it, on any open table; alice's next
roll got 409. Now:

- a wrong token is refused 403, always;
- no token is refused 403 too, by default (``FAIRROLL_SESSION_TOKENS=required``): the
  page and both clients send it, so only a stranger's call comes without it.
  ``optional`` is an operator's opt-in for clients from before the header: there a
  session never shown its token still takes rolls without one, and one that was shown
  it once is *bound* (its player's client sends it, so nobody rolls in it without it).
  That leaves a session whose player's client never sends the header open to anyone
  who read its ``seed_id``: the reason it is not the default.

A session from before tokens (no digest) is left as it was. A table's write key is
checked as before (``Roller.authorize``): the token says which player, the key which
table.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UnsetType

from fairroll.audit.redis import sessions as session_keys
from fairroll.audit.sessions import SeedSessions
from fairroll.audit.store import AnyRedis, AuditStore
from fairroll.mechanics import Mechanic
from fairroll.play.envelope import RollEnvelope
from fairroll.play.errors import KeyRefusedError
from fairroll.play.rolls import Rolled, Roller

__all__ = ["SESSION_TOKEN_HEADER", "BoundRoller", "SessionBinding", "TokenPolicy"]

SESSION_TOKEN_HEADER = "Fairroll-Session-Token"  # noqa: S105 (a header name)
TokenPolicy = Literal["required", "optional"]
InputT = TypeVar("InputT", bound=msgspec.Struct)
OutcomeT = TypeVar("OutcomeT", bound=msgspec.Struct)


class SessionBinding:
    """Checks that a request in a session shows that session's token."""

    def __init__(self, redis: AnyRedis, token: str | None, *, policy: TokenPolicy) -> None:
        self.redis = redis
        self.token = token
        self.policy = policy

    async def check(self, table: str, seed_id: str) -> None:
        """Raise ``KeyRefusedError`` (403) unless this request may act in the session.
        An unknown session passes: the roll or reveal itself answers 404."""
        digest, bound = await session_keys.read_fields(
            self.redis, table, seed_id, [session_keys.TOKEN, session_keys.BOUND]
        )
        if digest is None:
            return
        if self.token is None:
            if self.policy == "required" or _text(bound) == "1":
                raise KeyRefusedError(
                    f"seed session {seed_id} belongs to the player who opened it: send its "
                    f"token (answered when it was opened) as {SESSION_TOKEN_HEADER}"
                )
            return
        if not hmac.compare_digest(_text(digest), _digest(self.token)):
            raise KeyRefusedError(
                f"that is not the token of seed session {seed_id}: only the player who "
                "opened it may roll in it or reveal it"
            )
        if _text(bound) != "1":
            await session_keys.set_field(self.redis, table, seed_id, session_keys.BOUND, "1")


class BoundRoller(Roller):
    """A ``Roller`` that holds a roll in a session, and a call on a session's path (its
    reveal), to that session's token (``SessionBinding``)."""

    def __init__(
        self,
        store: AuditStore,
        sessions: SeedSessions,
        *,
        binding: SessionBinding,
        path_session: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(store, sessions, **options)
        self.binding = binding
        self.path_session = path_session

    async def authorize(self, table: str) -> None:
        await super().authorize(table)
        if self.path_session is not None:
            await self.binding.check(table, self.path_session)

    async def roll(
        self, mechanic: Mechanic[InputT, OutcomeT], request: RollEnvelope
    ) -> Rolled[OutcomeT]:
        session = request.session
        if not isinstance(session, UnsetType):
            await self.binding.check(request.table, session.seed_id)
        return await super().roll(mechanic, request)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return "" if value is None else str(value)
