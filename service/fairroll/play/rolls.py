"""Rolling through a mechanic: pick the dice source, resolve, record, then answer."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import msgspec
from msgspec import UnsetType
from redis.exceptions import RedisError

from fairroll.audit import (
    AuditStore,
    Checkpoint,
    Draft,
    Entry,
    Session,
    Source,
    StoreUnavailableError,
)
from fairroll.audit.entry import Claim
from fairroll.audit.sessions import SeedSessions, SessionError, SessionState
from fairroll.audit.store import AlreadyRecordedError, ClaimRefusedError, Marker, Recorded
from fairroll.mechanics import Mechanic
from fairroll.play.envelope import RollEnvelope, SessionRef, receipt_of
from fairroll.play.errors import (
    ConflictError,
    KeyRefusedError,
    KeyRequiredError,
    NonceConflictError,
    NotFoundError,
)
from fairroll.play.idempotency import Idempotency, fingerprint
from fairroll.play.metrics import AUDIT_APPEND_SECONDS, AUDIT_ERRORS, DICE, ROLLS
from fairroll.randomness import SeededDice, SuppliedDice, committed_seed, new_seed
from fairroll.rules import RuleError

__all__ = ["Rolled", "Roller"]

InputT = TypeVar("InputT", bound=msgspec.Struct)
OutcomeT = TypeVar("OutcomeT", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Rolled(Generic[OutcomeT]):
    """A resolved, recorded roll."""

    outcome: OutcomeT
    entry: Entry
    #: The entry's leaf hash, as the append computed it for the tree (None: a retry's
    #: roll, read back from the log).
    leaf: bytes | None = None
    #: A signed checkpoint of a tree holding the entry (its round's; a retry's: the
    #: table's now) and the entry's inclusion proof in it.
    checkpoint: Checkpoint | None = None
    proof: tuple[bytes, ...] = ()

    def envelope(self) -> dict[str, Any]:
        """The shared response fields, ready to splat into a mechanic's response."""
        return {
            "mechanic": self.entry.mechanic,
            "source": self.entry.source,
            "seed": self.entry.seed,
            "session": self.entry.session,
            "dice": self.entry.dice,
            "receipt": receipt_of(
                self.entry,
                self.leaf,
                checkpoint=(self.checkpoint.text, self.checkpoint.size)
                if self.checkpoint is not None
                else None,
                proof=self.proof,
            ),
        }


class Roller:
    """Resolves a request with its mechanic and records it before returning.

    One per request: it carries the request's ``Authorization`` header, checked
    against the table's write key before anything is rolled.
    """

    def __init__(
        self,
        store: AuditStore,
        sessions: SeedSessions,
        *,
        authorization: str | None = None,
        idempotency_key: str | None = None,
        default_open: bool = True,
        require_tables: bool = False,
    ) -> None:
        self.idempotency_key = idempotency_key
        self.store = store
        self.sessions = sessions
        self.authorization = authorization
        self.default_open = default_open
        self.require_tables = require_tables

    async def authorize(self, table: str) -> None:
        """Refuse a request without the key a keyed table needs (``KeyRequiredError``), with a
        wrong one or on a closed table (``KeyRefusedError``), or on a table never created
        where only created tables take rolls (``NotFoundError``)."""
        key = None
        if self.authorization and self.authorization.lower().startswith("bearer "):
            key = self.authorization[7:].strip()
        matches = await self.store.key_matches(table, key)
        if matches is None:
            if self.require_tables and not (table == "default" and self.default_open):
                # Only tables made with POST /v1/tables exist here: after a loss of data a
                # keyed table is refused (its record is gone), never open to anyone.
                raise NotFoundError(
                    f"table {table!r} was never created on this server: create a table "
                    "with POST /v1/tables (this server takes rolls only on created tables)"
                )
            if table == "default" and not self.default_open:
                raise KeyRefusedError(
                    "the default table is closed on this server: create a table (POST /v1/tables)"
                )
            return
        if key is None:
            raise KeyRequiredError(
                f"table {table!r} has a write key: send Authorization: Bearer <key>"
            )
        if not matches:
            raise KeyRefusedError(f"that is not the write key of table {table!r}")

    async def roll(
        self, mechanic: Mechanic[InputT, OutcomeT], request: RollEnvelope
    ) -> Rolled[OutcomeT]:
        await self.authorize(request.table)
        if self.idempotency_key is None:
            return await self._roll(mechanic, request)
        print_ = fingerprint(mechanic.name, cast(msgspec.Struct, request))
        guard = Idempotency(self.store.redis, request.table, self.idempotency_key, print_)
        try:
            earlier = await guard.earlier()
        except RedisError as exc:
            raise StoreUnavailableError(f"audit store unavailable: {exc}") from exc
        if earlier is None:
            try:
                return await self._roll(mechanic, request, guard.marker)
            except AlreadyRecordedError as exc:  # a duplicate that was in flight at once
                earlier = guard.seq_of(exc.marker)
        # A retry: the roll it repeats, not a new one.
        entry = await self.store.entry(request.table, earlier)
        if entry is None:
            raise StoreUnavailableError("the earlier roll is not in the audit store")
        outcome = msgspec.convert(entry.outcome, mechanic.outcome_type)
        try:  # the receipt a retry gets: the table's checkpoint now, and the proof in it
            checkpoint = await self.store.checkpoint(request.table)
            _, proof = await self.store.inclusion_proof(request.table, entry.seq, checkpoint.size)
        except RedisError as exc:
            raise StoreUnavailableError(f"audit store unavailable: {exc}") from exc
        return Rolled(outcome, entry, None, checkpoint, tuple(proof))

    async def _roll(
        self,
        mechanic: Mechanic[InputT, OutcomeT],
        request: RollEnvelope,
        marker: Marker | None = None,
    ) -> Rolled[OutcomeT]:
        given = [
            name
            for name, value in (
                ("seed", request.seed),
                ("dice", request.dice),
                ("session", request.session),
            )
            if not isinstance(value, UnsetType)
        ]
        if len(given) > 1:
            raise RuleError(
                "give one of seed (the service rolls), session (a committed seed) or dice "
                f"(you rolled), not {' and '.join(given)}",
                field=given[-1],
            )
        policy = await self.store.policy(request.table)
        if not isinstance(request.seed, UnsetType) and not policy.chosen_seeds:
            raise RuleError(
                f"table {request.table!r} takes no caller-chosen seed (its policy): a chosen "
                "seed can be ground for the outcome it gives. Leave seed out (the server "
                "draws one) or roll in a seed session",
                field="seed",
            )
        if not isinstance(request.dice, UnsetType) and not policy.supplied_dice:
            raise RuleError(
                f"table {request.table!r} takes no supplied dice (its policy): leave dice out",
                field="dice",
            )
        if not isinstance(request.session, UnsetType):
            return await self._committed(mechanic, request, request.session, marker)
        if not given and not policy.drawn_seeds:
            raise RuleError(
                f"table {request.table!r} takes no server-drawn seed (its policy): a drawn "
                "seed is fair only if the operator is honest. Roll in a seed session "
                f"(POST /v1/tables/{request.table}/seeds)",
                field="session",
            )
        source: SeededDice | SuppliedDice
        kind: Source
        if not isinstance(request.dice, UnsetType):
            source, kind = SuppliedDice(request.dice.groups(), request.dice.path), "supplied"
        elif isinstance(request.seed, str):
            source, kind = SeededDice(request.seed), "chosen"
        else:
            source, kind = SeededDice(new_seed()), "drawn"
        mechanic_input = mechanic.input_of(request)
        outcome = mechanic.resolve(mechanic_input, source)
        if isinstance(source, SuppliedDice):
            source.check_all_used()
        draft = Draft(
            table=request.table,
            mechanic=mechanic.name,
            request=mechanic_input,
            source=kind,
            seed=source.seed if isinstance(source, SeededDice) else None,
            dice=source.dice,
            outcome=outcome,
        )
        return Rolled(outcome, *await self.append_draft(mechanic, draft, marker))

    async def _committed(
        self,
        mechanic: Mechanic[InputT, OutcomeT],
        request: RollEnvelope,
        ref: SessionRef,
        marker: Marker | None,
    ) -> Rolled[OutcomeT]:
        """A roll in a seed session: it takes the session's next nonce in the same atomic
        append that stores it, so a refused roll takes none; if another process took that
        nonce first, the roll is made again on the next one (unless the caller said which
        nonce it expects: then 409). A client seed the table used before the roll's chain
        was committed is refused by the same append (422, ``session.client_seed``)."""
        table = request.table
        mechanic_input = mechanic.input_of(request)
        async with self.sessions.hold(table, ref.seed_id):
            for _ in range(SESSION_ATTEMPTS):
                try:
                    state = await self.sessions.state(table, ref.seed_id, cached=True)
                except SessionError as exc:
                    raise NotFoundError(str(exc)) from None
                if state.revealed:
                    self.sessions.forget(table, ref.seed_id)
                    raise _revealed(ref.seed_id)
                nonce = state.nonce + 1
                if not isinstance(ref.nonce, UnsetType) and ref.nonce != nonce:
                    fresh = await self.sessions.state(table, ref.seed_id)
                    if fresh != state:  # this process's view was behind: go on from Redis's
                        self.sessions.forget(table, ref.seed_id)
                        continue
                    raise NonceConflictError(ref.seed_id, ref.nonce, nonce)
                if state.spent:  # the chain is used up: commit the next one, then roll
                    with contextlib.suppress(ClaimRefusedError):  # renewed elsewhere first
                        await self.sessions.renew(table, ref.seed_id, state)
                    continue
                link, outcome, draft = self._in_session(
                    mechanic, table, mechanic_input, ref, state, nonce
                )
                try:
                    rolled = Rolled(outcome, *await self.append_draft(mechanic, draft, marker))
                except ClaimRefusedError as exc:
                    self.sessions.forget(table, ref.seed_id)
                    if exc.why == "revealed":
                        raise _revealed(ref.seed_id) from None
                    if exc.why == "unknown":
                        raise NotFoundError(
                            f"table {table!r} has no seed session {ref.seed_id}"
                        ) from None
                    if exc.why == "spent":
                        continue
                    if exc.why == "reused":
                        raise _reused(table, ref, exc) from None
                    if not isinstance(ref.nonce, UnsetType):
                        raise NonceConflictError(ref.seed_id, ref.nonce, exc.nonce + 1) from None
                    continue
                except BaseException:
                    self.sessions.forget(table, ref.seed_id)  # it may have been recorded
                    raise
                self.sessions.rolled(table, ref.seed_id, state, nonce)
                if link is not None and nonce == state.start + state.length - 1:
                    # The chain's last link is used: commit the next chain now, before any
                    # request for it is seen, so a client can draw its next client seed
                    # after the anchor is in the log (if this fails, the next roll renews).
                    used = msgspec.structs.replace(state, nonce=nonce)
                    with contextlib.suppress(ClaimRefusedError, StoreUnavailableError):
                        await self.sessions.renew(table, ref.seed_id, used)
                return rolled
        raise StoreUnavailableError(
            f"seed session {ref.seed_id} is too busy: other rolls kept taking its next nonce; "
            "nothing was recorded"
        )

    def _in_session(
        self,
        mechanic: Mechanic[InputT, OutcomeT],
        table: str,
        mechanic_input: InputT,
        ref: SessionRef,
        state: SessionState,
        nonce: int,
    ) -> tuple[str | None, OutcomeT, Draft]:
        """The roll with ``nonce`` in the session: the link it reveals (a chain), its
        outcome and its draft, with the claim its append makes."""
        link = None
        server_seed = state.server_seed
        if state.length:  # a hash chain: this roll reveals its own link
            link = server_seed = self.sessions.link(table, ref.seed_id, state, nonce)
        source = SeededDice(committed_seed(server_seed, ref.client_seed, nonce))
        outcome = mechanic.resolve(mechanic_input, source)
        draft = Draft(
            table=table,
            mechanic=mechanic.name,
            request=mechanic_input,
            source="committed",
            # The seed embeds the server seed (commit-reveal): it stays out until
            # the reveal. A chain's link is in the session.
            seed=None,
            dice=source.dice,
            outcome=outcome,
            session=Session(
                seed_id=ref.seed_id,
                commitment=state.commitment,
                client_seed=ref.client_seed,
                nonce=nonce,
                link=link,
                first_nonce=state.start if link is not None else None,
            ),
            claim=Claim(kind="roll", seed_id=ref.seed_id, nonce=nonce),
        )
        return link, outcome, draft

    async def append_draft(
        self, mechanic: Mechanic[Any, Any], draft: Draft, marker: Marker | None
    ) -> Recorded:
        """Record ``draft`` in the audit log, timed and counted (a subclass may add what
        the append must carry: ``play.sessions.BoundRoller`` adds the token shown)."""
        started = time.perf_counter()
        try:
            recorded = await self.store.record(draft, marker)
        except StoreUnavailableError:
            AUDIT_ERRORS.inc()
            raise
        AUDIT_APPEND_SECONDS.observe(time.perf_counter() - started)
        ROLLS.labels(mechanic.name).inc()
        DICE.labels(mechanic.name).inc(len(draft.dice))
        return recorded


#: Tries at a committed roll while other processes take the session's next nonce first.
SESSION_ATTEMPTS = 20


def _reused(table: str, ref: SessionRef, refused: ClaimRefusedError) -> RuleError:
    """A roll whose client seed the server knew before it drew the roll's chain, or that a
    roll on another chain used: it could have ground (or, from a pool of chains committed
    ahead, picked) the chain for that seed, so the roll would not be fair."""
    if refused.first_use < refused.chain:
        why = (
            f"this table's roll at seq {refused.first_use} used this client seed before "
            f"seed session {ref.seed_id}'s chain was committed (seq {refused.chain}), so "
            "the server could have ground the chain for it"
        )
    else:
        why = (
            f"this table's roll at seq {refused.first_use} used this client seed on another "
            "chain, and a client seed belongs to one chain: with chains committed ahead, the "
            "server could have picked the one whose dice it liked for a seed it had seen"
        )
    return RuleError(
        f"client seed reused: {why}. Draw a new client seed for each chain, once its anchor "
        f"is in the log (GET /v1/tables/{table}/seeds/{ref.seed_id} shows it), e.g. "
        "`openssl rand -hex 16`; nothing was rolled and no nonce was taken",
        field="session.client_seed",
    )


def _revealed(seed_id: str) -> ConflictError:
    return ConflictError(f"seed session {seed_id} was revealed: start a new session to roll")
