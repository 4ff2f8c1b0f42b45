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

from fairroll_client import _stdlib_verifier as stdlib

if TYPE_CHECKING:
    from fairroll_client.client import Fairroll

__all__ = ["PlayerSession", "SessionState", "UnfairRollError"]

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


class PlayerSession:
    """One player's seed session on one table; ``roll`` rolls any mechanic in it."""

    def __init__(self, client: Fairroll, state: SessionState) -> None:
        self.client = client
        self._state = state

    @classmethod
    def open(
        cls, client: Fairroll, table: str, player: str | None = None, length: int | None = None
    ) -> PlayerSession:
        """Start a new hash-chain session on ``table`` (for ``player``, if named; chains of
        ``length`` links, else the server's default)."""
        asked = {"player": player, "length": length}
        body = {k: v for k, v in asked.items() if v is not None} or None
        made = client._json("POST", f"/v1/tables/{table}/seeds", json=body)
        if made.get("kind") != "chain" or not stdlib.is_link(made.get("commitment")):
            raise UnfairRollError("the server did not open a hash-chain session", made)
        state = SessionState(
            table=table,
            seed_id=made["seed_id"],
            client_seed=secrets.token_hex(16),
            nonce=1,
            anchor=made["commitment"],
            length=made["length"],
        )
        return cls(client, state)

    def state(self) -> SessionState:
        return SessionState(**asdict(self._state))

    @property
    def seed_id(self) -> str:
        return self._state.seed_id

    def roll(
        self, path: str, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Roll ``body`` (no ``seed``, ``dice`` or ``session``) at this session's next
        nonce, and check the answer against the chain before returning it."""
        from fairroll_client.client import FairrollError  # noqa: PLC0415

        s = self._state
        asked = json.dumps({**body, "table": s.table}, sort_keys=True)
        for _ in range(ATTEMPTS):
            if s.nonce > s.first_nonce + s.length - 1 and s.pending is None:
                self._next_chain()
                s = self._state
            if s.pending is not None and s.pending[2] == asked:
                nonce, key = s.pending[0], idempotency_key or s.pending[1]
            else:  # a new roll, or another request after one that did not go through
                nonce = s.pending[0] if s.pending is not None else s.nonce
                key = idempotency_key or str(uuid.uuid4())
            s.pending = (nonce, key, asked)
            ref = {"seed_id": s.seed_id, "client_seed": s.client_seed, "nonce": nonce}
            try:
                answer = self.client.roll(
                    path,
                    {**body, "table": s.table, "session": ref},
                    idempotency_key=key,
                    fair=False,
                )
            except FairrollError as refused:
                problem = refused.problem if isinstance(refused.problem, dict) else {}
                if refused.status == 409 and isinstance(problem.get("nonce"), int):
                    s.nonce, s.pending = problem["nonce"], None  # this player rolled elsewhere
                    continue
                if refused.status < 500:
                    s.pending = None  # refused for what it asked: no nonce was taken
                raise
            self._check(answer, nonce)
            s.pending = None
            return answer
        raise FairrollError(409, {"detail": "the seed session kept moving; try again"})

    def _next_chain(self) -> None:
        """This chain is used up: learn the next one, committed (by the roll that used the
        last link) before this client asks for a roll on it, and draw a new client seed
        for it; or, if the server has not committed one, open a new session."""
        s = self._state
        status = self.client._json("GET", f"/v1/tables/{s.table}/seeds/{s.seed_id}")
        if status.get("first_nonce") == s.nonce and stdlib.is_link(status.get("commitment")):
            s.anchor, s.first_nonce, s.length = status["commitment"], s.nonce, status["length"]
            s.client_seed, s.last_link = secrets.token_hex(16), None
        else:
            self._state = PlayerSession.open(self.client, s.table, length=s.length)._state

    def _check(self, answer: dict[str, Any], nonce: int) -> None:
        s = self._state
        ref = answer.get("session") or {}
        link, first = ref.get("link"), ref.get("first_nonce")
        if ref.get("seed_id") != s.seed_id or ref.get("client_seed") != s.client_seed:
            raise UnfairRollError("the roll is not in this player's session", answer)
        if ref.get("nonce") != nonce or not stdlib.is_link(link) or not isinstance(first, int):
            raise UnfairRollError("the roll does not reveal its link at the nonce sent", answer)
        anchor = ref.get("commitment")
        if first != s.first_nonce or anchor != s.anchor:
            raise UnfairRollError("the roll is on another chain than the one committed", answer)
        # The link hashes to its chain's anchor in as many steps as it stands from the
        # chain's start: it is that chain's link, fixed before the first roll (a renewed
        # chain's tie to the one before is in the log, where verify_export checks it).
        if stdlib.chain_previous(link, nonce - first + 1) != anchor:
            raise UnfairRollError("the revealed link does not hash to its chain's anchor", answer)
        key = stdlib.committed_seed(link, s.client_seed, nonce).encode()
        for position, die in enumerate(answer.get("dice") or []):
            if stdlib.face(key, position, die["sides"]) != die["face"]:
                raise UnfairRollError(f"die {position} does not derive from the link", answer)
        s.last_link, s.nonce = link, nonce + 1
