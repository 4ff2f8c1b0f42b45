"""The same calls as :class:`~fairroll_client.Fairroll`, for asyncio (a chat bot, an
async VTT bridge): ``AsyncFairroll``, over ``httpx.AsyncClient``.

>>> async def strength() -> str:                                 # doctest: +SKIP
...     async with AsyncFairroll("https://dice.example", player="Roth") as dice:
...         rolled = await dice.roll_formula("4d6kh3 # Strength")
...         return rolled["words"]["text"]

It rolls fair by default exactly as the sync client does: in this client's hash-chain
seed session (``AsyncPlayerSession``: the very protocol of ``SessionRolls``, its calls
made with ``await``), each answer checked before it is returned. Verification is the
sync client's, run on what was fetched; ``TableWitness`` stays sync-only.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Generator
from dataclasses import asdict
from typing import Any

import httpx

from fairroll_client.checkpoints import KeptCheckpoints
from fairroll_client.client import (
    Audience,
    check_revealed,
    check_sealable,
    formula_body,
    in_session,
    kept_checkpoints,
    refusal,
    reveal_path,
    table_body,
)
from fairroll_client.errors import FairrollError
from fairroll_client.events import Event, EventReader
from fairroll_client.sessions import Call, SessionRolls, SessionState
from fairroll_client.verify import Verified, verify_export

__all__ = ["AsyncFairroll", "AsyncPlayerSession"]


class AsyncFairroll:
    """A fairroll server at ``base_url``, for asyncio; ``write_key`` is a table's.

    Fair by default: a roll without ``seed``, ``dice`` or ``session`` is made in this
    client's own seed session on its table, opened for ``player`` on first use; pass
    ``fair=False`` for a server-drawn seed (fair only if the operator is honest).
    ``root`` and ``checkpoints``: as ``Fairroll`` takes them (without a root, answers say
    NOT VERIFIED; the last checkpoint verified per table is kept, in ``checkpoints`` if
    it names a file)."""

    def __init__(
        self,
        base_url: str,
        write_key: str | None = None,
        *,
        player: str | None = None,
        root: str | None = None,
        checkpoints: KeptCheckpoints | str | os.PathLike[str] | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.write_key = write_key
        self.player = player
        self.root = root
        self.checkpoints = kept_checkpoints(checkpoints)
        self._timeout = timeout
        self._sessions: dict[str, AsyncPlayerSession] = {}
        self._opening = asyncio.Lock()
        headers = {"Authorization": f"Bearer {write_key}"} if write_key else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    def with_key(self, write_key: str) -> AsyncFairroll:
        """The same server, writing with a table's key (the same player)."""
        return AsyncFairroll(
            self.base_url,
            write_key,
            player=self.player,
            root=self.root,
            checkpoints=self.checkpoints,
            timeout=self._timeout,
        )

    async def session(
        self,
        table: str,
        *,
        state: SessionState | None = None,
        length: int | None = None,
        new: bool = False,
    ) -> AsyncPlayerSession:
        """This client's seed session on ``table``: opened on first use, taken up from a
        kept ``state``, or a new one (``new``). Concurrent first rolls open one session."""
        async with self._opening:
            if state is not None:
                self._sessions[table] = AsyncPlayerSession(self, state)
            if new or table not in self._sessions:
                self._sessions[table] = await AsyncPlayerSession.open(
                    self, table, self.player, length
                )
            return self._sessions[table]

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncFairroll:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    # -- rolls --------------------------------------------------------------------------

    async def create_table(
        self, policy: dict[str, bool] | None = None, **rules: bool
    ) -> dict[str, Any]:
        """A new table: ``{"table", "write_key", "policy"}``; the policy as keywords or
        as the spec's object, as ``Fairroll.create_table`` takes it."""
        return await self.call("POST", "/v1/tables", json=table_body(policy, rules))  # type: ignore[no-any-return]

    async def reveal_sealed(self, table: str, seq: int, opening: dict[str, Any]) -> dict[str, Any]:
        """Publish a sealed roll's ``opening`` (its answer's): ``Fairroll.reveal_sealed``."""
        return check_revealed(
            await self.call("POST", reveal_path(table, seq), json={"opening": opening}), seq
        )

    async def systems(self) -> dict[str, Any]:
        return await self.call("GET", "/v1/systems")  # type: ignore[no-any-return]

    async def roll(
        self,
        path: str,
        body: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        fair: bool = True,
        sealed: Audience | None = None,
    ) -> dict[str, Any]:
        """Roll any mechanic, in this client's seed session on the body's table unless
        the body names a seed, dice or a session (``sealed``: as ``Fairroll.roll``)."""
        if sealed is not None:
            check_sealable(body, fair=fair, audience=sealed)
        if fair and in_session(body):
            mine = await self.session(body.get("table", "default"))
            return await mine.roll(path, body, idempotency_key=idempotency_key, sealed=sealed)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return await self.call("POST", path, json=body, headers=headers)  # type: ignore[no-any-return]

    async def roll_formula(
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
        """Roll a dice formula read in ``dialect`` (``roll20``, ``foundry``, ``avrae``)."""
        body = formula_body(formula, table, dialect, seed=seed, dice=dice, session=session)
        return await self.roll("/v1/dice/rolls", body, idempotency_key=idempotency_key, fair=fair)

    async def odds(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", f"{path}/odds", json=body)  # type: ignore[no-any-return]

    # -- the log ------------------------------------------------------------------------

    async def entries(self, table: str, *, after: int = 0, limit: int = 100) -> dict[str, Any]:
        params = {"after": after, "limit": limit}
        return await self.call("GET", f"/v1/tables/{table}/entries", params=params)  # type: ignore[no-any-return]

    async def export(self, table: str) -> bytes:
        response = await self._http.get(f"/v1/tables/{table}/export")
        await self._check(response)
        return response.content

    async def keys(self) -> dict[str, Any]:
        return await self.call("GET", "/v1/keys")  # type: ignore[no-any-return]

    async def verify(self, table: str, *, root: str | None = None) -> Verified:
        """Export a table and check it here (``verify_export``, off the event loop), held
        to the checkpoints this client kept of it."""
        ndjson, keys = await asyncio.gather(self.export(table), self.keys())
        kept = self.checkpoints.of_table(table)
        return await asyncio.to_thread(
            verify_export, ndjson, keys, root=root or self.root, kept=kept
        )

    async def events(
        self, table: str, *, after: int | None = None, checkpoint: bool = False
    ) -> AsyncIterator[Event]:
        """Follow a table's events, resuming without a gap when the stream drops."""
        last = after
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            params = {"checkpoint": "true"} if checkpoint else None
            timeout = httpx.Timeout(self._timeout, read=None)
            try:
                async with self._http.stream(
                    "GET",
                    f"/v1/tables/{table}/events",
                    headers=headers,
                    params=params,
                    timeout=timeout,
                ) as response:
                    if response.status_code == 503:
                        await response.aread()
                        await asyncio.sleep(float(response.headers.get("Retry-After", 5)))
                        continue
                    await self._check(response)
                    reader = EventReader()
                    async for line in response.aiter_lines():
                        event = reader.feed(line)
                        if event is None:
                            continue
                        if event.seq is not None:
                            last = event.seq
                        yield event
            except httpx.TransportError:
                await asyncio.sleep(1.0)

    # -- plumbing -----------------------------------------------------------------------

    async def call(self, method: str, path: str, **options: Any) -> Any:
        """Any endpoint of the API, its answer as JSON (``FairrollError`` on a problem)."""
        response = await self._http.request(method, path, **options)
        await self._check(response)
        return response.json()

    @staticmethod
    async def _check(response: httpx.Response) -> None:
        if not response.is_success:
            await response.aread()
            raise refusal(response)


class AsyncPlayerSession:
    """One player's seed session on one table, for asyncio. Its rolls go one at a time
    (a lock): each takes the next nonce of one chain."""

    def __init__(self, client: AsyncFairroll, state: SessionState) -> None:
        self.client = client
        self._rolls = SessionRolls(state, client.root, client.checkpoints)
        self._one_at_a_time = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        client: AsyncFairroll,
        table: str,
        player: str | None = None,
        length: int | None = None,
    ) -> AsyncPlayerSession:
        opening = SessionRolls.open(table, client.root, player, length, client.checkpoints)
        rolls = await run(opening, client)
        return cls(client, rolls.state)

    def state(self) -> SessionState:
        return SessionState(**asdict(self._rolls.state))

    @property
    def seed_id(self) -> str:
        return self._rolls.state.seed_id

    async def roll(
        self,
        path: str,
        body: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        sealed: str | None = None,
    ) -> dict[str, Any]:
        """Roll ``body`` at this session's next nonce (``sealed``: a sealed roll for that
        audience), the answer checked (``sessions``)."""
        async with self._one_at_a_time:
            steps = self._rolls.roll(path, body, idempotency_key, sealed)
            return await run(steps, self.client)  # type: ignore[no-any-return]


async def run(steps: Generator[Call, Any, Any], client: AsyncFairroll) -> Any:
    """``sessions.run`` for asyncio: the same protocol, each call awaited."""
    try:
        call = next(steps)
        while True:
            try:
                result = await client.call(call.method, call.path, **call.options)
            except FairrollError as refused:
                call = steps.throw(refused)
            else:
                call = steps.send(result)
    except StopIteration as done:
        return done.value
