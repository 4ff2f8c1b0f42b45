"""Seed sessions: the commitment, every roll and the reveal are log entries.

A session is a *hash chain* (the default: ``fairroll.chain``) or *commit-reveal*. A
chain session commits its chain's anchor (``session.commit``, ``kind: chain``) and each
roll reveals its own link, so it verifies the moment it is answered; when a chain is
used up, the next roll first appends the next chain's anchor (``session.renew``). A
commit-reveal session commits one server seed's SHA-256 and reveals the seed at the end.

The server draws a secret seed and publishes only its SHA-256 (the commitment), in a
signed ``session.commit`` entry appended before any roll can use the session. Each
roll takes the session's next nonce (1, 2, 3 ...) inside the atomic append that stores
it (``store``), so nonces are consecutive in log order, a refused roll takes none, and
no roll follows the reveal. The server seed leaves Redis only in a ``session.reveal``
entry: on request, or when the session has been idle for ``IDLE_SECONDS`` (24 h),
``revealed_by: expiry``; so an export carries everything a verifier needs, and no
committed roll stays unverifiable.

    fairroll:{<table>}:seed:<seed_id>   hash: server_seed (a chain's last link),
                                        commitment (a chain's anchor), nonce, revealed,
                                        used (ms, last roll or creation), revealed_by,
                                        commit_seq, reveal_seq, start and length (the
                                        current chain's first nonce and length; 0: a
                                        commit-reveal session), renew_seq, token (the
                                        SHA-256 of the session's token, hex)
    fairroll:sessions:open              sorted set "<table>\\n<seed_id>" by creation time
                                        (ms): the sweeper's work list (``sweep``)
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Literal

import msgspec

from fairroll.audit.entry import (
    COMMIT_MECHANIC,
    RENEW_MECHANIC,
    REVEAL_MECHANIC,
    Claim,
    Draft,
    Receipt,
    receipt_of,
)
from fairroll.audit.redis import sessions as session_keys
from fairroll.audit.store import AuditStore, ClaimRefusedError, Recorded
from fairroll.chain import HashChain
from fairroll.randomness import commitment_of, new_seed

__all__ = [
    "DEFAULT_CHAIN_LENGTH",
    "IDLE_SECONDS",
    "SeedSessions",
    "SessionError",
    "SessionKind",
    "SessionState",
    "SessionStatus",
]

SessionKind = Literal["chain", "commit"]
DEFAULT_CHAIN_LENGTH = 1000
#: Chains kept per process (each keeps one link in ``chain.SPACING``).
CACHED_CHAINS = 4096

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
    #: ``chain`` (each roll reveals its link) or ``commit`` (commit-reveal).
    kind: SessionKind = "commit"
    #: The anchor of the current chain, or the SHA-256 of the server seed.
    commitment: str
    rolls: int
    revealed: bool
    #: After the reveal: the server seed, or the current chain's last link.
    server_seed: str | None
    #: A chain session: its current chain's first nonce and length (null: commit-reveal).
    first_nonce: int | None = None
    length: int | None = None
    #: Who the session is for, as its commitment names them.
    player: str | None = None
    #: ``request`` (POST .../reveal) or ``expiry`` (idle for 24 h); None while open.
    revealed_by: str | None = None
    #: The seqs of the session's ``session.commit`` and ``session.reveal`` entries.
    commit_seq: int | None = None
    reveal_seq: int | None = None
    #: A chain session: the seq of the entry that committed its current chain (its
    #: ``session.commit``, or the ``session.renew`` since), which a client checks before
    #: it draws that chain's client seed.
    chain_seq: int | None = None
    #: The receipt of the entry this answer made (the commitment, or the reveal).
    receipt: Receipt | None = None
    #: Only in the answer that started the session, shown once: the player's secret for
    #: posting cosignatures of the table's checkpoints with this session
    #: (``POST .../cosignatures``, ``session: {seed_id, token}``) while it is open.
    token: (
        Annotated[
            str,
            msgspec.Meta(
                description="Only in the answer that started the session, shown once: "
                "with the seed_id, the player's credential for posting cosignatures of "
                "the table's checkpoints (POST .../cosignatures, `session`) while the "
                "session is open. Keep it secret."
            ),
        ]
        | None
    ) = None


class SessionState(msgspec.Struct, frozen=True, kw_only=True):
    """What a roll needs of its session: the last nonce taken and the seeds."""

    nonce: int
    server_seed: str
    commitment: str
    revealed: bool
    used: int
    #: The current chain's first nonce and length (length 0: commit-reveal).
    start: int = 1
    length: int = 0

    @property
    def spent(self) -> bool:
        """A chain session whose chain is used up: the next roll renews it first."""
        return self.length > 0 and self.nonce >= self.start + self.length - 1


class SeedSessions:
    def __init__(self, store: AuditStore) -> None:
        self.store = store
        self.redis = store.redis
        #: Per session in use here: its lock and how many steps hold or await it.
        self._locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}
        #: Chains in use here, by (table, seed_id, anchor): immutable, so safe to keep.
        self._chains: OrderedDict[tuple[str, str, str], HashChain] = OrderedDict()
        #: Sessions as this process last saw them roll, so a roll needs no read first.
        #: The append's claim is the authority (the nonce it takes must follow the one in
        #: Redis, within the chain in Redis): a stale state is refused, forgotten, and
        #: read afresh.
        self._states: OrderedDict[tuple[str, str], SessionState] = OrderedDict()

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

    async def create(
        self,
        table: str,
        kind: SessionKind = "chain",
        *,
        length: int = DEFAULT_CHAIN_LENGTH,
        player: str | None = None,
    ) -> SessionStatus:
        """Draw a server seed (a chain's last link) and append its commitment (a chain's
        anchor); the session exists once that entry is stored (the same atomic step)."""
        seed_id = "s" + secrets.token_urlsafe(12)
        server_seed = new_seed()
        request: dict[str, object] = {"seed_id": seed_id}
        if kind == "chain":
            chain = HashChain(server_seed, length)
            commitment = chain.anchor
            request |= {"kind": "chain", "commitment": commitment, "length": length}
            request["first_nonce"] = 1
            self._remember(table, seed_id, commitment, chain)
        else:
            length = 0
            commitment = commitment_of(server_seed)
            request["commitment"] = commitment
        if player is not None:
            request["player"] = player
        claim = Claim(
            kind="commit",
            seed_id=seed_id,
            nonce=0,
            server_seed=server_seed,
            commitment=commitment,
            length=length,
        )
        recorded = await self.store.record(Draft.statement(table, COMMIT_MECHANIC, request, claim))
        entry = recorded.entry
        token = secrets.token_urlsafe(24)
        await session_keys.set_field(self.redis, table, seed_id, session_keys.TOKEN, _digest(token))
        await session_keys.list_open(self.redis, table, seed_id, _now_ms())
        return SessionStatus(
            table=table,
            seed_id=seed_id,
            kind=kind,
            commitment=commitment,
            rolls=0,
            revealed=False,
            server_seed=None,
            first_nonce=1 if kind == "chain" else None,
            length=length or None,
            player=player,
            commit_seq=entry.seq,
            chain_seq=entry.seq if kind == "chain" else None,
            receipt=_receipt(recorded),
            token=token,
        )

    async def holds(self, table: str, seed_id: str, token: str) -> bool:
        """Whether ``token`` is the one session ``seed_id`` of ``table`` was started with,
        and the session is open: what a player shows to post a cosignature."""
        digest, revealed = await session_keys.read_fields(
            self.redis, table, seed_id, [session_keys.TOKEN, "revealed"]
        )
        if digest is None or _text(revealed) == "1":
            return False
        return hmac.compare_digest(_text(digest), _digest(token))

    def link(self, table: str, seed_id: str, state: SessionState, nonce: int) -> str:
        """The link a chain session's roll with ``nonce`` reveals."""
        chain = self._chain(table, seed_id, state)
        return chain.link(nonce - state.start + 1)

    async def renew(self, table: str, seed_id: str, state: SessionState) -> None:
        """Commit a used-up chain session's next chain (``session.renew``), from the nonce
        it is at; refused (``ClaimRefusedError``) if another process renewed it first."""
        server_seed = new_seed()
        chain = HashChain(server_seed, state.length)
        request = {
            "seed_id": seed_id,
            "kind": "chain",
            "commitment": chain.anchor,
            "length": state.length,
            "first_nonce": state.nonce + 1,
            "previous": state.commitment,
        }
        claim = Claim(
            kind="renew",
            seed_id=seed_id,
            nonce=state.nonce,
            server_seed=server_seed,
            commitment=chain.anchor,
            length=state.length,
        )
        self.forget(table, seed_id)
        await self.store.append(Draft.statement(table, RENEW_MECHANIC, request, claim))
        self._remember(table, seed_id, chain.anchor, chain)

    def _chain(self, table: str, seed_id: str, state: SessionState) -> HashChain:
        key = (table, seed_id, state.commitment)
        chain = self._chains.get(key)
        if chain is None:
            chain = HashChain(state.server_seed, state.length)
            if chain.anchor != state.commitment:
                raise SessionError(
                    f"seed session {seed_id}'s chain does not hash to its anchor", revealed=False
                )
            self._remember(table, seed_id, state.commitment, chain)
        else:
            self._chains.move_to_end(key)
        return chain

    def _remember(self, table: str, seed_id: str, anchor: str, chain: HashChain) -> None:
        self._chains[(table, seed_id, anchor)] = chain
        while len(self._chains) > CACHED_CHAINS:
            self._chains.popitem(last=False)

    async def state(self, table: str, seed_id: str, *, cached: bool = False) -> SessionState:
        """The session as Redis holds it; ``cached``: as this process last saw it roll,
        if it did (for a roll, whose append checks it)."""
        key = (table, seed_id)
        if cached and (known := self._states.get(key)) is not None:
            self._states.move_to_end(key)
            return known
        state = await self._read(table, seed_id)
        if cached:
            self._keep(key, state)
        return state

    def rolled(self, table: str, seed_id: str, state: SessionState, nonce: int) -> None:
        """A roll with ``nonce`` was recorded in the session ``state`` describes."""
        self._keep((table, seed_id), msgspec.structs.replace(state, nonce=nonce))

    def forget(self, table: str, seed_id: str) -> None:
        """The session moved (another process rolled, renewed or revealed it)."""
        self._states.pop((table, seed_id), None)

    def _keep(self, key: tuple[str, str], state: SessionState) -> None:
        self._states[key] = state
        self._states.move_to_end(key)
        while len(self._states) > CACHED_CHAINS:
            self._states.popitem(last=False)

    async def _read(self, table: str, seed_id: str) -> SessionState:
        raw = await session_keys.read_fields(
            self.redis,
            table,
            seed_id,
            ["nonce", "server_seed", "commitment", "revealed", "used", "start", "length"],
        )
        nonce, server_seed, commitment, revealed, used, start, length = (
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
            start=int(start or 1),
            length=int(length or 0),
        )

    async def reveal(
        self, table: str, seed_id: str, *, by: str = "request", idle_before: int | None = None
    ) -> SessionStatus:
        """Close the session with a ``session.reveal`` entry publishing its server seed
        (idempotent: a revealed session answers its status). With ``idle_before`` (ms),
        only a session unused since then is revealed; else its status is returned."""
        self.forget(table, seed_id)
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
                    recorded = await self.store.record(draft)
                except ClaimRefusedError as exc:
                    if exc.why == "moved":
                        continue
                    return await self.status(table, seed_id)
                await session_keys.unlist(self.redis, table, seed_id)
                status = await self.status(table, seed_id)
                return msgspec.structs.replace(status, receipt=_receipt(recorded))
        raise SessionError(f"seed session {seed_id} is too busy to reveal; retry", revealed=False)

    async def status(self, table: str, seed_id: str) -> SessionStatus:
        raw = await session_keys.read_session(self.redis, table, seed_id)
        if not raw:
            raise SessionError(f"table {table!r} has no seed session {seed_id}", revealed=False)
        fields = {_text(k): _text(v) for k, v in raw.items()}
        revealed = fields.get("revealed") == "1"
        length = int(fields.get("length") or 0)
        return SessionStatus(
            table=table,
            seed_id=seed_id,
            kind="chain" if length else "commit",
            first_nonce=int(fields.get("start") or 1) if length else None,
            length=length or None,
            commitment=fields["commitment"],
            rolls=int(fields["nonce"]),
            revealed=revealed,
            server_seed=fields["server_seed"] if revealed else None,
            revealed_by=(fields.get("revealed_by") or "request") if revealed else None,
            commit_seq=int(fields["commit_seq"]) if "commit_seq" in fields else None,
            reveal_seq=int(fields["reveal_seq"]) if "reveal_seq" in fields else None,
            chain_seq=_chain_seq(fields) if length else None,
        )

    async def sweep(self, idle_seconds: float = IDLE_SECONDS) -> int:
        """Reveal sessions idle for ``idle_seconds``; returns how many it revealed. Safe to
        run in every process at once: a reveal is one atomic append, refused if a roll
        moved the session meanwhile."""
        cutoff = _now_ms() - int(idle_seconds * 1000)
        revealed = 0
        for table, seed_id in await session_keys.due_sessions(self.redis, cutoff, SWEEP_BATCH):
            try:
                status = await self.reveal(table, seed_id, by="expiry", idle_before=cutoff)
            except SessionError:
                await session_keys.unlist(self.redis, table, seed_id)
                continue
            if not status.revealed:  # rolled since: look again once it has been idle enough
                state = await self.state(table, seed_id)
                await session_keys.list_open(self.redis, table, seed_id, state.used)
                continue
            revealed += status.receipt is not None
            await session_keys.unlist(self.redis, table, seed_id)
        return revealed


def _receipt(recorded: Recorded) -> Receipt:
    """A statement's receipt: its round's signed checkpoint and its inclusion proof."""
    checkpoint = recorded.checkpoint
    return receipt_of(
        recorded.entry,
        recorded.leaf_hash,
        checkpoint=(checkpoint.text, checkpoint.size) if checkpoint is not None else None,
        proof=recorded.proof,
    )


def _chain_seq(fields: dict[str, str]) -> int | None:
    seq = fields.get("renew_seq") or fields.get("commit_seq")
    return int(seq) if seq else None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
