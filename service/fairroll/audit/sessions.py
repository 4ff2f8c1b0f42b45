"""Commit-reveal seed sessions: the commitment, every roll and the reveal are log entries.

The server draws a secret seed and publishes only its SHA-256 (the commitment), in a
signed ``session.commit`` entry appended before any roll can use the session. Each
roll takes the session's next nonce (1, 2, 3 ...) inside the atomic append that stores
it (``store``), so nonces are consecutive in log order, a refused roll takes none, and
no roll follows the reveal. The server seed leaves Redis only in a ``session.reveal``
entry: on request, or when the session has been idle for ``IDLE_SECONDS`` (24 h),
``revealed_by: expiry``; so an export carries everything a verifier needs, and no
committed roll stays unverifiable.

    fairroll:{<table>}:seed:<seed_id>   hash: server_seed, commitment, nonce, revealed,
                                        used (ms, last roll or creation), revealed_by,
                                        commit_seq, reveal_seq
    fairroll:sessions:open              sorted set "<table>\\n<seed_id>" by creation time
                                        (ms): the sweeper's work list (``sweep``)
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec

from fairroll.audit.entry import (
    COMMIT_MECHANIC,
    REVEAL_MECHANIC,
    Claim,
    Draft,
    Receipt,
    receipt_of,
)
from fairroll.audit.keyspace import OPEN_SESSIONS, session_key
from fairroll.audit.store import AuditStore, ClaimRefusedError
from fairroll.randomness import commitment_of, new_seed

__all__ = ["IDLE_SECONDS", "SeedSessions", "SessionError", "SessionState", "SessionStatus"]

IDLE_SECONDS = 24 * 3600
SWEEP_BATCH = 100
#: Tries at a reveal while rolls keep moving the session's nonce.
ATTEMPTS = 20


class SessionError(ValueError):
    """The session is unknown, or revealed and closed to rolls."""

    def __init__(self, message: str, *, revealed: bool) -> None:
        super().__init__(message)
        self.revealed = revealed


class SessionStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A seed session: its commitment, rolls so far, and the server seed once revealed."""

    table: str
    seed_id: str
    commitment: str
    rolls: int
    revealed: bool
    server_seed: str | None
    #: ``request`` (POST .../reveal) or ``expiry`` (idle for 24 h); None while open.
    revealed_by: str | None = None
    #: The seqs of the session's ``session.commit`` and ``session.reveal`` entries.
    commit_seq: int | None = None
    reveal_seq: int | None = None
    #: The receipt of the entry this answer made (the commitment, or the reveal).
    receipt: Receipt | None = None


class SessionState(msgspec.Struct, frozen=True, kw_only=True):
    """What a roll needs of its session: the last nonce taken and the seeds."""

    nonce: int
    server_seed: str
    commitment: str
    revealed: bool
    used: int


class SeedSessions:
    def __init__(self, store: AuditStore) -> None:
        self.store = store
        self.redis = store.redis
        #: Per session in use here: its lock and how many steps hold or await it.
        self._locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, table: str, seed_id: str) -> AsyncIterator[None]:
        """One step at a time per session in this process (a roll: read the nonce, roll,
        append); other processes race through the append's check on the nonce."""
        key = (table, seed_id)
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    async def create(self, table: str) -> SessionStatus:
        """Draw a server seed and append its commitment; the session exists once that
        entry is stored (the same atomic step)."""
        seed_id = "s" + secrets.token_urlsafe(12)
        server_seed = new_seed()
        commitment = commitment_of(server_seed)
        draft = Draft.statement(
            table,
            COMMIT_MECHANIC,
            {"seed_id": seed_id, "commitment": commitment},
            Claim(
                kind="commit",
                seed_id=seed_id,
                nonce=0,
                server_seed=server_seed,
                commitment=commitment,
            ),
        )
        entry = await self.store.append(draft)
        await self.redis.zadd(OPEN_SESSIONS, {f"{table}\n{seed_id}": _now_ms()})
        return SessionStatus(
            table=table,
            seed_id=seed_id,
            commitment=commitment,
            rolls=0,
            revealed=False,
            server_seed=None,
            commit_seq=entry.seq,
            receipt=receipt_of(entry),
        )

    async def state(self, table: str, seed_id: str) -> SessionState:
        raw = await self.redis.hmget(
            session_key(table, seed_id), ["nonce", "server_seed", "commitment", "revealed", "used"]
        )
        nonce, server_seed, commitment, revealed, used = (
            None if v is None else _text(v) for v in raw
        )
        if nonce is None or server_seed is None or commitment is None:
            raise SessionError(f"table {table!r} has no seed session {seed_id}", revealed=False)
        return SessionState(
            nonce=int(nonce),
            server_seed=server_seed,
            commitment=commitment,
            revealed=revealed == "1",
            used=int(used or 0),
        )

    async def reveal(
        self, table: str, seed_id: str, *, by: str = "request", idle_before: int | None = None
    ) -> SessionStatus:
        """Close the session with a ``session.reveal`` entry publishing its server seed
        (idempotent: a revealed session answers its status). With ``idle_before`` (ms),
        only a session unused since then is revealed; else its status is returned."""
        async with self.hold(table, seed_id):
            for _ in range(ATTEMPTS):
                state = await self.state(table, seed_id)
                if state.revealed or (idle_before is not None and state.used > idle_before):
                    return await self.status(table, seed_id)
                draft = Draft.statement(
                    table,
                    REVEAL_MECHANIC,
                    {
                        "seed_id": seed_id,
                        "commitment": state.commitment,
                        "server_seed": state.server_seed,
                        "rolls": state.nonce,
                        "revealed_by": by,
                    },
                    Claim(kind="reveal", seed_id=seed_id, nonce=state.nonce, revealed_by=by),
                )
                try:
                    entry = await self.store.append(draft)
                except ClaimRefusedError as exc:
                    if exc.why == "moved":
                        continue
                    return await self.status(table, seed_id)
                await self.redis.zrem(OPEN_SESSIONS, f"{table}\n{seed_id}")
                status = await self.status(table, seed_id)
                return msgspec.structs.replace(status, receipt=receipt_of(entry))
        raise SessionError(f"seed session {seed_id} is too busy to reveal; retry", revealed=False)

    async def status(self, table: str, seed_id: str) -> SessionStatus:
        raw = await self.redis.hgetall(session_key(table, seed_id))
        if not raw:
            raise SessionError(f"table {table!r} has no seed session {seed_id}", revealed=False)
        fields = {_text(k): _text(v) for k, v in raw.items()}
        revealed = fields.get("revealed") == "1"
        return SessionStatus(
            table=table,
            seed_id=seed_id,
            commitment=fields["commitment"],
            rolls=int(fields["nonce"]),
            revealed=revealed,
            server_seed=fields["server_seed"] if revealed else None,
            revealed_by=(fields.get("revealed_by") or "request") if revealed else None,
            commit_seq=int(fields["commit_seq"]) if "commit_seq" in fields else None,
            reveal_seq=int(fields["reveal_seq"]) if "reveal_seq" in fields else None,
        )

    async def sweep(self, idle_seconds: float = IDLE_SECONDS) -> int:
        """Reveal sessions idle for ``idle_seconds``; returns how many it revealed. Safe to
        run in every process at once: a reveal is one atomic append, refused if a roll
        moved the session meanwhile."""
        cutoff = _now_ms() - int(idle_seconds * 1000)
        due = await self.redis.zrangebyscore(OPEN_SESSIONS, "-inf", cutoff, 0, SWEEP_BATCH)
        revealed = 0
        for raw in due:
            member = _text(raw)
            table, _, seed_id = member.partition("\n")
            try:
                status = await self.reveal(table, seed_id, by="expiry", idle_before=cutoff)
            except SessionError:
                await self.redis.zrem(OPEN_SESSIONS, member)
                continue
            if not status.revealed:  # rolled since: look again once it has been idle enough
                state = await self.state(table, seed_id)
                await self.redis.zadd(OPEN_SESSIONS, {member: state.used})
                continue
            revealed += status.receipt is not None
            await self.redis.zrem(OPEN_SESSIONS, member)
        return revealed


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
