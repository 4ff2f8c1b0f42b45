"""A table's sealed rolls: the reveal that opens one (docs/audit.md, "Sealed rolls").

Whoever holds a sealed roll's opening (its roller, or the GM the VTT whispered it to)
publishes it here. The server checks it as every verifier will (``audit.verify.sealed``:
the entry at ``seq`` is a ``sealed.roll``, the opening opens its commitment, its dice
derive from ``link:client_seed:nonce:blind``, its outcome is the one the rules give),
then appends a ``sealed.reveal`` statement. A refused opening is a 422 naming its field,
and nothing is appended. A roll is revealed once: the append itself marks it (in the
same atomic step, as an Idempotency-Key is marked), so two reveals at once append one,
and the other is answered 409.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

import msgspec
from litestar import Controller, post
from litestar.params import Parameter

from fairroll.api.controllers.params import TablePath
from fairroll.api.problems import problem_responses
from fairroll.audit import AuditStore
from fairroll.audit.entry import Draft, Receipt, jcs, receipt_of
from fairroll.audit.keyspace import sealed_reveal_key
from fairroll.audit.sealed import SEALED_REVEAL_MECHANIC, SEALED_ROLL_MECHANIC
from fairroll.audit.store import AlreadyRecordedError, Marker
from fairroll.audit.verify.sealed import SealedRoll, opening_problem
from fairroll.mechanics import replay_entry
from fairroll.play.envelope import Opening
from fairroll.play.errors import ConflictError, NotFoundError
from fairroll.play.rolls import Roller
from fairroll.rules import RuleError

__all__ = ["REVEAL_MARKER_SECONDS", "SealedController", "SealedReveal", "SealedRevealed"]

#: How long the mark of a revealed roll is kept (its reveal is in the log for good; the
#: mark only refuses a second one before it is appended): ten years.
REVEAL_MARKER_SECONDS = 10 * 365 * 24 * 3600


class SealedReveal(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A sealed roll's opening, as its roll's answer gave it."""

    opening: Opening


class SealedRevealed(msgspec.Struct, frozen=True, kw_only=True):
    """A sealed roll opened: the seq of its ``sealed.roll`` entry, the seq of the
    ``sealed.reveal`` statement that opens it, and that statement's receipt."""

    table: str
    seq: int
    reveal_seq: int
    receipt: Receipt


SealedSeq = Annotated[
    int,
    Parameter(
        ge=1,
        le=2**53 - 1,
        description="The seq of the sealed roll's entry (its receipt's `seq`).",
    ),
]


class SealedController(Controller):
    """Sealed rolls: a reveal publishes a sealed roll's opening in the log."""

    path = "/v1/tables/{table:str}/sealed"
    tags = ("audit",)

    @post(
        "/{seq:int}/reveal",
        operation_id="revealSealedRoll",
        summary="Reveal a sealed roll: publish its opening, checked against its commitment",
        description="The body is the `opening` the sealed roll's answer gave. The server "
        "checks it as every verifier does (it opens the entry's commitment, its dice derive "
        "from `link:client_seed:nonce:blind`, its outcome is the one the rules give) and "
        "appends a `sealed.reveal` statement; else 422 naming the field, and nothing is "
        "appended. A roll already revealed: 409.",
        status_code=200,
        responses=problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
    )
    async def reveal_sealed_roll(
        self,
        table: TablePath,
        seq: SealedSeq,
        data: SealedReveal,
        store: AuditStore,
        roller: Roller,
    ) -> SealedRevealed:
        await roller.authorize(table)
        entry = await store.entry(table, seq)
        if entry is None:
            raise NotFoundError(f"table {table!r} has no entry at seq {seq}")
        session = entry.session
        if entry.mechanic != SEALED_ROLL_MECHANIC or session is None or session.link is None:
            raise RuleError(
                f"the entry at seq {seq} is a {entry.mechanic}, not a sealed roll: nothing "
                "was appended",
                field="seq",
            )
        sealed = entry.request
        roll = SealedRoll(
            seq=seq,
            mechanic=sealed["mechanic"],
            commitment=sealed["commitment"],
            link=session.link,
            client_seed=session.client_seed,
            nonce=session.nonce,
        )
        opening = msgspec.json.decode(msgspec.json.encode(data.opening))
        problem = opening_problem(roll, opening, replay_entry, seq)
        if problem is not None:
            field, why = problem
            raise RuleError(f"{why}: nothing was appended", field=field)
        draft = Draft.statement(table, SEALED_REVEAL_MECHANIC, {"seq": seq, "opening": opening})
        digest = hashlib.sha256(jcs(opening)).hexdigest()
        marker = Marker(sealed_reveal_key(table, seq), digest, REVEAL_MARKER_SECONDS)
        try:
            recorded = await store.record(draft, marker)
        except AlreadyRecordedError as exc:
            marked = exc.marker
            text = marked.decode() if isinstance(marked, bytes) else str(marked)
            earlier = text.rsplit(":", 1)[-1]
            raise ConflictError(
                f"the sealed roll at seq {seq} was revealed already (seq {earlier}): a roll "
                "is revealed once; nothing was appended"
            ) from None
        made = recorded.entry
        checkpoint = recorded.checkpoint
        return SealedRevealed(
            table=table,
            seq=seq,
            reveal_seq=made.seq,
            receipt=receipt_of(
                made,
                recorded.leaf_hash,
                checkpoint=(checkpoint.text, checkpoint.size) if checkpoint else None,
                proof=recorded.proof,
            ),
        )
