"""The HTTP calls a VTT plugin or a bot makes, over ``httpx``."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any, Literal

import httpx

from fairroll_client.checkpoints import KeptCheckpoints
from fairroll_client.errors import FairrollError, UnfairRollError
from fairroll_client.events import Event, parse_events
from fairroll_client.sessions import PlayerSession, SessionState
from fairroll_client.verify import Verified, verify_export

__all__ = ["POLICY", "Audience", "Fairroll", "FairrollError"]


#: What a table's policy may say (``TablePolicy`` in the spec): which sources of dice the
#: table takes.
POLICY = ("chosen_seeds", "drawn_seeds", "supplied_dice")


class Fairroll:
    """A fairroll server at ``base_url``; ``write_key`` is a table's (``create_table``).

    Fair by default: a roll without ``seed``, ``dice`` or ``session`` is made in this
    client's own hash-chain seed session on its table (``session``), opened for
    ``player`` on first use, and every answer is checked before it is returned
    (``sessions``); pass ``fair=False`` for a server-drawn seed (fair only if the
    operator is honest).

    ``root`` is the root key id the operator gave out of band: an answer is verified
    only under it (its receipt's note signed by a key the root certified); without one
    each answer's ``checked`` says NOT VERIFIED.

    The last checkpoint verified per table is kept (``checkpoints``: in memory, or in the
    file a path names, to hold the server to one history across runs) and every new
    receipt's note must extend it (``fairroll_client.checkpoints``)."""

    def __init__(
        self,
        base_url: str,
        write_key: str | None = None,
        *,
        player: str | None = None,
        root: str | None = None,
        checkpoints: KeptCheckpoints | str | os.PathLike[str] | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.write_key = write_key
        self.player = player
        self.root = root
        self.checkpoints = kept_checkpoints(checkpoints)
        self._sessions: dict[str, PlayerSession] = {}
        headers = {"Authorization": f"Bearer {write_key}"} if write_key else {}
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    def with_key(self, write_key: str) -> Fairroll:
        """The same server, writing with a table's key (the same player)."""
        return Fairroll(
            self.base_url,
            write_key,
            player=self.player,
            root=self.root,
            checkpoints=self.checkpoints,
            timeout=self._http.timeout.read or 30.0,
        )

    def session(
        self,
        table: str,
        *,
        state: SessionState | None = None,
        length: int | None = None,
        new: bool = False,
    ) -> PlayerSession:
        """This client's seed session on ``table``: opened on first use (chains of
        ``length`` links, else the server's default), taken up from a kept ``state``
        (``PlayerSession.state()``), or a new one (``new``: after ``SessionClosedError``,
        the player told why)."""
        if state is not None:
            self._sessions[table] = PlayerSession(self, state)
        if new or table not in self._sessions:
            self._sessions[table] = PlayerSession.open(self, table, self.player, length)
        return self._sessions[table]

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Fairroll:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- rolls --------------------------------------------------------------------------

    def create_table(self, policy: dict[str, bool] | None = None, **rules: bool) -> dict[str, Any]:
        """A new table: ``{"table", "write_key", "policy"}`` (keep the write key). Its
        policy as keywords, ``create_table(chosen_seeds=False)``, or as the spec's
        object, ``create_table(policy={"chosen_seeds": False})``."""
        return self._json("POST", "/v1/tables", json=table_body(policy, rules))

    def reveal_sealed(self, table: str, seq: int, opening: dict[str, Any]) -> dict[str, Any]:
        """Publish a sealed roll's ``opening`` (as its answer gave it; ``seq``: its
        receipt's) in the log: the server checks it against the commitment and appends a
        ``sealed.reveal`` statement, answered with its receipt (409: revealed already)."""
        answer = self._json("POST", reveal_path(table, seq), json={"opening": opening})
        return check_revealed(answer, seq)

    def systems(self) -> dict[str, Any]:
        """Every rule system and mechanic the server rolls, with their endpoints."""
        return self._json("GET", "/v1/systems")

    def roll(
        self,
        path: str,
        body: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        fair: bool = True,
        sealed: Audience | None = None,
    ) -> dict[str, Any]:
        """Roll any mechanic: ``roll("/v1/tft/contests", {...})``, in this client's seed
        session on the body's table unless the body names a seed, dice or a session.

        ``sealed`` (``"gm"``, ``"blind"`` or ``"self"``: whom your VTT shows it to) seals
        the roll: this client draws the blind, the log records only a commitment, and the
        answer (checked against it) carries the ``opening`` to keep; publish it later with
        ``reveal_sealed``. A sealed roll rolls in this client's session only."""
        if sealed is not None:
            check_sealable(body, fair=fair, audience=sealed)
        if fair and in_session(body):
            table = body.get("table", "default")
            mine = self.session(table)
            return mine.roll(path, body, idempotency_key=idempotency_key, sealed=sealed)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._json("POST", path, json=body, headers=headers)

    def roll_formula(
        self,
        formula: str,
        *,
        table: str = "default",
        dialect: str = "roll20",
        seed: str | None = None,
        dice: dict[str, list[int]] | None = None,
        session: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        fair: bool = True,
    ) -> dict[str, Any]:
        """Roll a dice formula (``4d6kh3``, ``1d20+5 # Longsword``, ``6d10>=8!``) read in
        ``dialect`` (``roll20``, ``foundry`` or ``avrae``), in this client's seed session
        unless ``seed``, ``dice`` or ``session`` is given."""
        body = formula_body(formula, table, dialect, seed=seed, dice=dice, session=session)
        return self.roll("/v1/dice/rolls", body, idempotency_key=idempotency_key, fair=fair)

    def odds(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """Exact odds of any mechanic's input: ``odds("/v1/dice/rolls", {"formula": "2d6"})``."""
        return self._json("POST", f"{path}/odds", json=body)

    # -- the log ------------------------------------------------------------------------

    def entries(self, table: str, *, after: int = 0, limit: int = 100) -> dict[str, Any]:
        """One page of a table's entries (``entries``, ``words``, ``next_after``)."""
        return self._json(
            "GET", f"/v1/tables/{table}/entries", params={"after": after, "limit": limit}
        )

    def all_entries(self, table: str) -> Iterator[dict[str, Any]]:
        """Every entry of a table, page by page."""
        after = 0
        while True:
            page = self.entries(table, after=after)
            yield from page["entries"]
            if page.get("next_after") is None:
                return
            after = page["next_after"]

    def export(self, table: str) -> bytes:
        """The table's log as NDJSON: every entry's signed bytes, one per line."""
        response = self._http.get(f"/v1/tables/{table}/export")
        self._check(response)
        return response.content

    def keys(self) -> dict[str, Any]:
        """The server's published keys (``GET /v1/keys``)."""
        return self._json("GET", "/v1/keys")

    def verify(self, table: str, *, root: str | None = None) -> Verified:
        """Export a table and check it here (see :func:`verify_export`), under ``root``
        or the client's, held to the checkpoints this client kept of it."""
        kept = self.checkpoints.of_table(table)
        return verify_export(self.export(table), self.keys(), root=root or self.root, kept=kept)

    def events(
        self, table: str, *, after: int | None = None, checkpoint: bool = False
    ) -> Iterator[Event]:
        """Follow a table's events as they happen, resuming without a gap when the stream
        drops (``Last-Event-ID``); stop by breaking out of the loop."""
        last = after
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            params = {"checkpoint": "true"} if checkpoint else None
            try:
                with self._http.stream(
                    "GET",
                    f"/v1/tables/{table}/events",
                    headers=headers,
                    params=params,
                    timeout=httpx.Timeout(self._http.timeout.connect, read=None),
                ) as response:
                    if response.status_code == 503:
                        response.read()
                        time.sleep(float(response.headers.get("Retry-After", 5)))
                        continue
                    self._check(response)
                    for event in parse_events(response.iter_lines()):
                        if event.seq is not None:
                            last = event.seq
                        yield event
            except httpx.TransportError:
                time.sleep(1.0)

    # -- plumbing -----------------------------------------------------------------------

    def call(self, method: str, path: str, **options: Any) -> Any:
        """Any endpoint of the API, its answer as JSON (``FairrollError`` on a problem);
        ``options`` as httpx takes them (``json``, ``params``)."""
        return self._json(method, path, **options)

    def _json(self, method: str, path: str, **options: Any) -> Any:
        response = self._http.request(method, path, **options)
        self._check(response)
        return response.json()

    @staticmethod
    def _check(response: httpx.Response) -> None:
        if not response.is_success:
            response.read()
            raise refusal(response)


def table_body(policy: dict[str, bool] | None, rules: dict[str, bool]) -> dict[str, Any] | None:
    """The body of ``POST /v1/tables``, the policy as keywords or as the spec's object."""
    unknown = sorted(set(rules) - set(POLICY))
    if unknown:
        takes = ", ".join(POLICY)
        raise TypeError(f"create_table() takes the policy {takes}; not {', '.join(unknown)}")
    said = {**(policy or {}), **rules}
    return {"policy": said} if said else None


def formula_body(
    formula: str,
    table: str,
    dialect: str,
    *,
    seed: str | None,
    dice: dict[str, list[int]] | None,
    session: dict[str, Any] | None,
) -> dict[str, Any]:
    """The body of ``POST /v1/dice/rolls``."""
    body: dict[str, Any] = {"formula": formula, "table": table}
    if dialect != "roll20":
        body["dialect"] = dialect
    body.update((k, v) for k, v in (("seed", seed), ("dice", dice), ("session", session)) if v)
    return body


def kept_checkpoints(
    given: KeptCheckpoints | str | os.PathLike[str] | None,
) -> KeptCheckpoints:
    """The client's store of checkpoints: the one given (shared, as ``with_key`` shares
    it), one kept in the file a path names, or one in memory."""
    return given if isinstance(given, KeptCheckpoints) else KeptCheckpoints(given)


#: Whom a sealed roll's VTT shows it to: roller and GM, the GM only, the roller only.
Audience = Literal["gm", "blind", "self"]


def check_sealable(body: dict[str, Any], *, fair: bool, audience: str) -> None:
    """A sealed roll rolls in this client's hash-chain session: refused here (as the
    server would, 422) with ``fair=False`` or a body naming a seed, dice or a session."""
    if audience not in ("gm", "blind", "self"):
        raise ValueError(f"sealed is gm, blind or self, not {audience!r}")
    if not fair or not in_session(body):
        raise ValueError(
            "a sealed roll rolls in this client's hash-chain seed session: leave seed, "
            "dice and session out of the body, and fair on"
        )


def reveal_path(table: str, seq: int) -> str:
    return f"/v1/tables/{table}/sealed/{seq}/reveal"


def check_revealed(answer: Any, seq: int) -> dict[str, Any]:
    """The reveal's answer names the sealed roll revealed and a receipt of its statement."""
    receipt = answer.get("receipt") if isinstance(answer, dict) else None
    if answer.get("seq") != seq or not isinstance(receipt, dict):
        raise UnfairRollError(f"the answer reveals another roll than seq {seq}", answer)
    if receipt.get("seq") != answer.get("reveal_seq"):
        raise UnfairRollError("the reveal's receipt is not of its statement", answer)
    return answer  # type: ignore[no-any-return]


def in_session(body: dict[str, Any]) -> bool:
    """A roll the client makes in its seed session: one naming no seed, dice or session."""
    return not {"seed", "dice", "session"} & body.keys()


def refusal(response: httpx.Response) -> FairrollError:
    """The ``FairrollError`` of a refused call (its body read)."""
    try:
        problem: Any = response.json()
    except ValueError:
        problem = response.text
    return FairrollError(response.status_code, problem)
