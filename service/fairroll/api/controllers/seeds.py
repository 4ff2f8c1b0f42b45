"""A table's seed sessions: started, read, revealed."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import Body, Parameter

from fairroll.api.controllers.params import (
    OptionalBody,
    SeedId,
    TablePath,
)
from fairroll.api.problems import problem_responses
from fairroll.audit import (
    AuditStore,
)
from fairroll.audit.entry import receipt_of
from fairroll.audit.sessions import (
    DEFAULT_CHAIN_LENGTH,
    SeedSessions,
    SessionError,
    SessionKind,
    SessionStatus,
)
from fairroll.chain import MAX_LENGTH
from fairroll.play.rolls import Roller
from fairroll.rules import RuleError
from fairroll.rules.vocabulary import Name

__all__ = ["NewSession", "SeedSessionsController"]


async def _session(pending: Awaitable[SessionStatus]) -> SessionStatus:
    try:
        return await pending
    except SessionError as exc:
        raise NotFoundException(str(exc)) from None


class NewSession(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A seed session to start; the body may be left out (a hash chain of the default
    length, for no one in particular)."""

    kind: SessionKind = "chain"
    length: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=MAX_LENGTH,
                description="Links in each chain: rolls before the session commits its next "
                f"chain (default {DEFAULT_CHAIN_LENGTH}; hash chains only).",
            ),
        ]
        | None
    ) = None
    player: (
        Annotated[
            Name,
            msgspec.Meta(description="Whom the session is for: a player rolls in their own."),
        ]
        | None
    ) = None


class SeedSessionsController(Controller):
    """A player's seed session on a table: a hash chain or commit-reveal."""

    path = "/v1/tables/{table:str}"
    tags = ("audit",)

    @post(
        "/seeds",
        operation_id="createSeedSession",
        summary="Start a seed session for a player: a hash chain (each roll reveals its link) "
        "or commit-reveal",
        description="A hash-chain session (the default) commits its chain's anchor in the "
        "log before any roll; each roll reveals its own link, which hashes to the one "
        "before, so the roll verifies the moment it is answered. A commit-reveal session "
        "(`kind: commit`) shows only its server seed's SHA-256 until it is revealed. Open "
        "one session per player (docs/randomness.md).",
        status_code=201,
        responses=problem_responses(400, 401, 403, 415, 422, 429, 503),
        operation_class=OptionalBody,
    )
    async def create_seed_session(
        self,
        request: Request[Any, Any, Any],
        table: TablePath,
        sessions: SeedSessions,
        roller: Roller,
        data: Annotated[
            NewSession | None, Body(description="The kind of session (optional).")
        ] = None,
    ) -> SessionStatus:
        if data is None and (await request.body()).strip():
            raise RuleError("the body is a session (a JSON object), or nothing", field="body")
        await roller.authorize(table)
        asked = data or NewSession()
        if asked.kind == "commit" and asked.length is not None:
            raise RuleError("a commit-reveal session has no chain length", field="length")
        return await sessions.create(
            table,
            asked.kind,
            length=asked.length or DEFAULT_CHAIN_LENGTH,
            player=asked.player,
        )

    @get(
        "/seeds/{seed_id:str}",
        operation_id="getSeedSession",
        summary="A seed session's commitment, rolls so far, and the server seed once revealed",
        responses=problem_responses(400, 404, 422),
    )
    async def get_seed_session(
        self,
        table: TablePath,
        seed_id: SeedId,
        sessions: SeedSessions,
        store: AuditStore,
        receipt: Annotated[
            bool,
            Parameter(
                description="Add the `receipt` of the entry that committed the current "
                "chain (its inclusion proof in the table's signed checkpoint now), for a "
                "client to check before it draws that chain's client seed; a plain status "
                "poll leaves it out and costs no signature."
            ),
        ] = False,
    ) -> SessionStatus:
        status = await _session(sessions.status(table, seed_id))
        if not receipt or status.chain_seq is None or status.revealed:
            return status
        # The receipt of the entry that committed the current chain, proven in the tree
        # the table has now (a checkpoint signed for it): asked for by a client that
        # checks it under its pinned root before it draws that chain's client seed.
        entry = await store.entry(table, status.chain_seq)
        if entry is None:
            return status
        checkpoint = await store.checkpoint(table)
        leaf, proof = await store.inclusion_proof(table, entry.seq, checkpoint.size)
        made = receipt_of(entry, leaf, checkpoint=(checkpoint.text, checkpoint.size), proof=proof)
        return msgspec.structs.replace(status, receipt=made)

    @post(
        "/seeds/{seed_id:str}/reveal",
        operation_id="revealSeedSession",
        summary="End a seed session and publish its server seed; it takes no more rolls",
        status_code=200,
        responses=problem_responses(400, 401, 403, 404, 422, 429),
    )
    async def reveal_seed_session(
        self, table: TablePath, seed_id: SeedId, sessions: SeedSessions, roller: Roller
    ) -> SessionStatus:
        await roller.authorize(table)
        return await _session(sessions.reveal(table, seed_id))
