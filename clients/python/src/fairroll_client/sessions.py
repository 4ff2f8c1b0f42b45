"""A player's hash-chain seed session: what makes a roll fair against the operator.

The server commits a hash chain's anchor in the log before the first roll; each roll
reveals the chain's next link, mixed with a client seed this client drew from
``secrets`` and kept, so neither side could pick the dice (``docs/randomness.md`` in the
service's repository). This module checks each answer as it comes, trusting nothing the
server says: the link hashes to the link before it (or the anchor), and every die
derives from ``link:client_seed:nonce``. A roll that did not go through is sent again
with the same nonce, client seed and Idempotency-Key, so a server that refuses rolls
can only refuse them again, never change their dice. The client seed is drawn afresh
for each chain, once that chain's anchor is committed: a server that knew the client
seed before it drew a chain could grind the chain for it.

Keep ``state()`` to go on with the same session in another process (``Fairroll.session
(table, state=...)``).
"""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from fairroll_client._core.chain import is_link, steps_to
from fairroll_client._core.randomness import committed_seed, derive_face

if TYPE_CHECKING:
    from fairroll_client.client import Fairroll

__all__ = ["PlayerSession", "SessionRolls", "SessionState", "UnfairRollError"]

#: Tries at one roll while the session's nonce is elsewhere (another process of this
#: player rolled) or the session was closed (a new one is opened).
ATTEMPTS = 3


class UnfairRollError(Exception):
    """An answer that does not follow from the committed chain: keep it, it is evidence."""

    def __init__(self, reason: str, answer: Any) -> None:
        super().__init__(reason)
        self.answer = answer


@dataclass
class SessionState:
    """What a client keeps of its session: ids, its secret client seed, the next nonce,
    the current chain's anchor and first nonce, and the link revealed last."""

    table: str
    seed_id: str
    client_seed: str
    nonce: int
    anchor: str
    length: int
    first_nonce: int = 1
    last_link: str | None = None
    #: A roll sent and not answered: (nonce, Idempotency-Key, its body as JSON).
    pending: tuple[int, str, str] | None = None


class SessionRolls:
    """What a session does between its HTTP calls, the same for the sync and the async
    client: which nonce and Idempotency-Key the next roll takes, what a refusal means for
    the nonce, whether a used-up chain goes on, and the check of each answer."""

    def __init__(self, state: SessionState) -> None:
        self.state = state

    @staticmethod
    def opening(player: str | None, length: int | None) -> dict[str, Any] | None:
        """The body that opens a session (``POST /v1/tables/{table}/seeds``)."""
        asked = {"player": player, "length": length}
        return {k: v for k, v in asked.items() if v is not None} or None

    @staticmethod
    def opened(table: str, made: dict[str, Any]) -> SessionState:
        """The state of a session the server just opened, with a client seed drawn here."""
        if made.get("kind") != "chain" or not is_link(made.get("commitment")):
            raise UnfairRollError("the server did not open a hash-chain session", made)
        return SessionState(
            table=table,
            seed_id=made["seed_id"],
            client_seed=secrets.token_hex(16),
            nonce=1,
            anchor=made["commitment"],
            length=made["length"],
        )

    def used_up(self) -> bool:
        """The chain has no link left for a new roll (ask ``status_path``, then ``go_on``)."""
        s = self.state
        return s.nonce > s.first_nonce + s.length - 1 and s.pending is None

    def status_path(self) -> str:
        return f"/v1/tables/{self.state.table}/seeds/{self.state.seed_id}"

    def go_on(self, status: dict[str, Any]) -> bool:
        """Take up the next chain, committed (by the roll that used the last link) before
        this client asks for a roll on it, with a new client seed; False when the server
        committed none (open a new session)."""
        s = self.state
        if status.get("first_nonce") == s.nonce and is_link(status.get("commitment")):
            s.anchor, s.first_nonce, s.length = status["commitment"], s.nonce, status["length"]
            s.client_seed, s.last_link = secrets.token_hex(16), None
            return True
        return False

    def request(
        self, body: dict[str, Any], idempotency_key: str | None
    ) -> tuple[int, str, dict[str, Any]]:
        """(nonce, Idempotency-Key, body) of the next try at rolling ``body``: a roll that
        did not go through is sent again with the same nonce, client seed and key."""
        s = self.state
        asked = json.dumps({**body, "table": s.table}, sort_keys=True)
        if s.pending is not None and s.pending[2] == asked:
            nonce, key = s.pending[0], idempotency_key or s.pending[1]
        else:  # a new roll, or another request after one that did not go through
            nonce = s.pending[0] if s.pending is not None else s.nonce
            key = idempotency_key or str(uuid.uuid4())
        s.pending = (nonce, key, asked)
        ref = {"seed_id": s.seed_id, "client_seed": s.client_seed, "nonce": nonce}
        return nonce, key, {**body, "table": s.table, "session": ref}

    def try_again(self, status: int, problem: Any) -> bool:
        """After a refusal: True when the roll should be tried again at another nonce
        (this player rolled elsewhere); a refusal for what was asked frees the nonce."""
        said = problem if isinstance(problem, dict) else {}
        if status == 409 and isinstance(said.get("nonce"), int):
            self.state.nonce, self.state.pending = said["nonce"], None
            return True
        if status < 500:
            self.state.pending = None  # refused for what it asked: no nonce was taken
        return False

    def check(self, answer: dict[str, Any], nonce: int) -> None:
        """The answer follows from the committed chain, or ``UnfairRollError``."""
        s = self.state
        ref = answer.get("session") or {}
        link, first = ref.get("link"), ref.get("first_nonce")
        if ref.get("seed_id") != s.seed_id or ref.get("client_seed") != s.client_seed:
            raise UnfairRollError("the roll is not in this player's session", answer)
        if ref.get("nonce") != nonce or not is_link(link) or not isinstance(first, int):
            raise UnfairRollError("the roll does not reveal its link at the nonce sent", answer)
        anchor = ref.get("commitment")
        if first != s.first_nonce or anchor != s.anchor:
            raise UnfairRollError("the roll is on another chain than the one committed", answer)
        # The link hashes to its chain's anchor in as many steps as it stands from the
        # chain's start: it is that chain's link, fixed before the first roll (a renewed
        # chain's tie to the one before is in the log, where verify_export checks it).
        if steps_to(link, nonce - first + 1) != anchor:
            raise UnfairRollError("the revealed link does not hash to its chain's anchor", answer)
        key = committed_seed(link, s.client_seed, nonce).encode()
        for position, die in enumerate(answer.get("dice") or []):
            if derive_face(key, position, die["sides"]) != die["face"]:
                raise UnfairRollError(f"die {position} does not derive from the link", answer)
        s.last_link, s.nonce, s.pending = link, nonce + 1, None


class PlayerSession:
    """One player's seed session on one table; ``roll`` rolls any mechanic in it."""

    def __init__(self, client: Fairroll, state: SessionState) -> None:
        self.client = client
        self._rolls = SessionRolls(state)

    @classmethod
    def open(
        cls, client: Fairroll, table: str, player: str | None = None, length: int | None = None
    ) -> PlayerSession:
        """Start a new hash-chain session on ``table`` (for ``player``, if named; chains of
        ``length`` links, else the server's default)."""
        opening = SessionRolls.opening(player, length)
        made = client.call("POST", f"/v1/tables/{table}/seeds", json=opening)
        return cls(client, SessionRolls.opened(table, made))

    def state(self) -> SessionState:
        return SessionState(**asdict(self._rolls.state))

    @property
    def seed_id(self) -> str:
        return self._rolls.state.seed_id

    def roll(
        self, path: str, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Roll ``body`` (no ``seed``, ``dice`` or ``session``) at this session's next
        nonce, and check the answer against the chain before returning it."""
        from fairroll_client.client import FairrollError  # noqa: PLC0415

        rolls = self._rolls
        for _ in range(ATTEMPTS):
            if rolls.used_up() and not rolls.go_on(self.client.call("GET", rolls.status_path())):
                rolls.state = PlayerSession.open(
                    self.client, rolls.state.table, length=rolls.state.length
                )._rolls.state
            nonce, key, sent = rolls.request(body, idempotency_key)
            try:
                answer = self.client.roll(path, sent, idempotency_key=key, fair=False)
            except FairrollError as refused:
                if rolls.try_again(refused.status, refused.problem):
                    continue
                raise
            rolls.check(answer, nonce)
            return answer
        raise FairrollError(409, {"detail": "the seed session kept moving; try again"})
