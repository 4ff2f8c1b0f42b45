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

A roll's token is checked by the append that would store it (``audit.store``'s
``ShownToken``, in ``lua/append.lua``): in the same atomic step, before anything is
written, and without a round trip of its own; a session's first roll with its token
binds it there too. A reveal (``authorize`` on the session's path) reads the session
first. So a refused roll is answered 403 once the roll reaches its append: a stranger's
roll in a revealed session is answered 409 (revealed) as anyone's, one naming a nonce
the session is not at 409 with the nonce it is at, and a repeat of a recorded roll (its
very request and Idempotency-Key) its recorded answer, all of which the log shows anyone
already; none of them writes anything. (A chain whose renewal failed after its last
link is renewed by the session's next roll before that roll is appended, whoever sends
it: a ``session.renew`` the server draws, nothing the caller picks.)
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, Literal, TypeVar

import msgspec

from fairroll.audit.entry import Draft
from fairroll.audit.redis import sessions as session_keys
from fairroll.audit.sessions import SeedSessions
from fairroll.audit.store import (
    SHOWN_TOKEN,
    AnyRedis,
    AuditStore,
    Marker,
    Recorded,
    ShownToken,
    TokenRefusedError,
)
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
                raise _refused(seed_id, "missing")
            return
        if not hmac.compare_digest(_text(digest), _digest(self.token)):
            raise _refused(seed_id, "wrong")
        if _text(bound) != "1":
            await session_keys.set_field(self.redis, table, seed_id, session_keys.BOUND, "1")

    def shown(self, seed_id: str) -> ShownToken:
        """What this request shows of ``seed_id``'s token, for its roll's append to check
        (the same rules as ``check``, in ``lua/append.lua``)."""
        digest = _digest(self.token) if self.token is not None else None
        return ShownToken(seed_id, digest, required=self.policy == "required")


def _refused(seed_id: str, why: str) -> KeyRefusedError:
    """The 403 of a call in a session that did not show its token (``missing``) or showed
    another (``wrong``), whether ``check`` or the append found it."""
    if why == "missing":
        return KeyRefusedError(
            f"seed session {seed_id} belongs to the player who opened it: send its "
            f"token (answered when it was opened) as {SESSION_TOKEN_HEADER}"
        )
    return KeyRefusedError(
        f"that is not the token of seed session {seed_id}: only the player who "
        "opened it may roll in it or reveal it"
    )


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
        try:
            return await super().roll(mechanic, request)
        except TokenRefusedError as exc:
            raise _refused(exc.seed_id, exc.why) from None

    async def append_draft(
        self, mechanic: Mechanic[Any, Any], draft: Draft, marker: Marker | None
    ) -> Recorded:
        """The append of a roll in a session carries the token this request showed
        (``SHOWN_TOKEN``, for that one append): the script refuses it there."""
        claim = draft.claim
        if claim is None or claim.kind != "roll":
            return await super().append_draft(mechanic, draft, marker)
        shown = SHOWN_TOKEN.set(self.binding.shown(claim.seed_id))
        try:
            return await super().append_draft(mechanic, draft, marker)
        finally:
            SHOWN_TOKEN.reset(shown)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return "" if value is None else str(value)
