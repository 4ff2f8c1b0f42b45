"""Rolling through a mechanic: pick the dice source, resolve, record, then answer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import msgspec
from litestar.exceptions import (
    ClientException,
    NotAuthorizedException,
    NotFoundException,
    PermissionDeniedException,
)
from msgspec import UnsetType
from redis.exceptions import RedisError

from fairroll.api.envelope import RollEnvelope, receipt_of
from fairroll.api.idempotency import Idempotency, fingerprint
from fairroll.api.metrics import AUDIT_APPEND_SECONDS, AUDIT_ERRORS, DICE, ROLLS
from fairroll.audit import AuditStore, Draft, Entry, Session, Source, StoreUnavailableError
from fairroll.audit.sessions import SeedSessions, SessionError
from fairroll.audit.store import AlreadyRecordedError, Marker
from fairroll.mechanics import Mechanic
from fairroll.randomness import SeededDice, SuppliedDice, committed_seed, new_seed
from fairroll.rules import RuleError

__all__ = ["Roller"]

InputT = TypeVar("InputT", bound=msgspec.Struct)
OutcomeT = TypeVar("OutcomeT", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Rolled(Generic[OutcomeT]):
    """A resolved, recorded roll."""

    outcome: OutcomeT
    entry: Entry

    def envelope(self) -> dict[str, Any]:
        """The shared response fields, ready to splat into a mechanic's response."""
        return {
            "mechanic": self.entry.mechanic,
            "source": self.entry.source,
            "seed": self.entry.seed,
            "session": self.entry.session,
            "dice": self.entry.dice,
            "receipt": receipt_of(self.entry),
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
        """401 without the key a keyed table needs, 403 with a wrong one or a closed table."""
        key = None
        if self.authorization and self.authorization.lower().startswith("bearer "):
            key = self.authorization[7:].strip()
        matches = await self.store.key_matches(table, key)
        if matches is None:
            if self.require_tables and not (table == "default" and self.default_open):
                # Only tables made with POST /v1/tables exist here: after a loss of data a
                # keyed table is refused (its record is gone), never open to anyone.
                raise NotFoundException(
                    f"table {table!r} was never created on this server: create a table "
                    "with POST /v1/tables (this server takes rolls only on created tables)"
                )
            if table == "default" and not self.default_open:
                raise PermissionDeniedException(
                    "the default table is closed on this server: create a table (POST /v1/tables)"
                )
            return
        if key is None:
            raise NotAuthorizedException(
                f"table {table!r} has a write key: send Authorization: Bearer <key>",
                headers={"WWW-Authenticate": 'Bearer realm="fairroll"'},
            )
        if not matches:
            raise PermissionDeniedException(f"that is not the write key of table {table!r}")

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
        return Rolled(outcome, entry)

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
        session: Session | None = None
        source: SeededDice | SuppliedDice
        if not isinstance(request.dice, UnsetType):
            source = SuppliedDice(request.dice.groups())
        elif not isinstance(request.session, UnsetType):
            ref = request.session
            try:
                nonce, server_seed, commitment = await self.sessions.next_nonce(
                    request.table, ref.seed_id
                )
            except SessionError as exc:
                raise (
                    ClientException(str(exc), status_code=409)
                    if exc.revealed
                    else NotFoundException(str(exc))
                ) from None
            session = Session(
                seed_id=ref.seed_id, commitment=commitment, client_seed=ref.client_seed, nonce=nonce
            )
            source = SeededDice(committed_seed(server_seed, ref.client_seed, nonce))
        else:
            source = SeededDice(request.seed if isinstance(request.seed, str) else new_seed())
        mechanic_input = mechanic.input_of(request)
        outcome = mechanic.resolve(mechanic_input, source)
        if isinstance(source, SuppliedDice):
            source.check_all_used()
        kind: Source = "supplied" if isinstance(source, SuppliedDice) else "seeded"
        draft = Draft(
            table=request.table,
            mechanic=mechanic.name,
            request=mechanic_input,
            source="committed" if session else kind,
            # A committed roll's seed embeds the server seed: it stays out until the reveal.
            seed=source.seed if isinstance(source, SeededDice) and session is None else None,
            dice=source.dice,
            outcome=outcome,
            session=session,
        )
        started = time.perf_counter()
        try:
            entry = await self.store.append(draft, marker)
        except StoreUnavailableError:
            AUDIT_ERRORS.inc()
            raise
        AUDIT_APPEND_SECONDS.observe(time.perf_counter() - started)
        ROLLS.labels(mechanic.name).inc()
        DICE.labels(mechanic.name).inc(len(draft.dice))
        return Rolled(outcome, entry)
