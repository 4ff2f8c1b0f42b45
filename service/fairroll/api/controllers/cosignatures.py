"""Players and witnesses as cosigners: ``POST /v1/tables/{table}/cosignatures`` takes a
C2SP cosignature (``audit.cosignature``) of one of the table's checkpoints, and ``GET``
serves every cosigner's latest, so players compare views through the server; the
checkpoint note itself carries the cosignatures of its own tree as extra signature
lines (``GET .../checkpoint``). The server only relays: a player trusts the cosignatures
it checks itself, and compares notes over channels the operator does not run too."""

from __future__ import annotations

import base64
import time
from typing import Annotated

import msgspec
from litestar import Controller, get, post

from fairroll.api.controllers.tables import TablePath
from fairroll.api.problems import problem_responses
from fairroll.audit import AuditStore, merkle
from fairroll.audit.checkpoint import NoteError, open_note
from fairroll.audit.cosignature import CosignatureError, open_cosignature, parse_verifier_key
from fairroll.audit.receipts import trusted_keys
from fairroll.audit.redis.cosignatures import CosignedCheckpoint
from fairroll.play.errors import ConflictError
from fairroll.rules import RuleError

__all__ = ["CosignaturesController", "NewCosignature"]

#: How far in the future a cosignature's time may be (clocks disagree a little).
SKEW_SECONDS = 300


class NewCosignature(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A cosigner's verifier key and a checkpoint note of this table it cosigned: the
    note as the server signed it, with the cosigner's signature line among its own."""

    vkey: Annotated[
        str,
        msgspec.Meta(
            min_length=5,
            max_length=400,
            description="The cosigner's verifier key: <name>+<key ID hex>+base64(0x04 || key).",
        ),
    ]
    note: Annotated[
        str,
        msgspec.Meta(
            min_length=10,
            max_length=4000,
            description="The checkpoint's signed note with the cosignature line (C2SP "
            "tlog-cosignature, cosignature/v1).",
        ),
    ]


class Cosigned(msgspec.Struct, frozen=True, kw_only=True):
    """Every cosigner's latest cosignature of the table's checkpoints, largest first."""

    table: str
    cosignatures: list[CosignedCheckpoint]


class CosignaturesController(Controller):
    path = "/v1/tables/{table:str}/cosignatures"
    tags = ("audit",)

    @get(
        operation_id="listTableCosignatures",
        summary="Every cosigner's latest cosignature of the table's checkpoints",
        responses=problem_responses(400, 422, 503),
    )
    async def listed(self, table: TablePath, store: AuditStore) -> Cosigned:
        return Cosigned(table=table, cosignatures=await store.cosignatures.listed(table))

    @post(
        operation_id="cosignTableCheckpoint",
        summary="Post a cosignature (C2SP tlog-cosignature) of one of the table's checkpoints",
        description="The note must be one this log signed, of a tree the log still has; a "
        "note of a tree the log does not hold at that size is refused (409): keep it, it "
        "is half of a proof of equivocation (`fairroll verify --equivocation`).",
        status_code=201,
        responses=problem_responses(400, 409, 415, 422, 429, 503),
    )
    async def cosign(
        self, table: TablePath, store: AuditStore, data: NewCosignature
    ) -> CosignedCheckpoint:
        try:
            cosigner = parse_verifier_key(data.vkey)
            stamp = open_cosignature(data.note, data.vkey)
        except CosignatureError as exc:
            raise RuleError(str(exc), field="vkey" if "key" in str(exc) else "note") from None
        if stamp > time.time() + SKEW_SECONDS:
            raise RuleError("the cosignature's time is in the future", field="note")
        size, root = await self._signed_by_this_log(table, store, data.note)
        head = await store.head(table)
        if size > head.seq:
            raise ConflictError(
                f"the note signs a tree of {size} entries; this log has {head.seq}: keep the "
                "note, it is evidence"
            )
        if size and await store.prove(table, lambda r: merkle.subtree_hash(0, size, r)) != root:
            raise ConflictError(
                f"the note signs another tree of size {size} than this log holds: keep it, "
                "with this log's checkpoint of that size it proves equivocation"
            )
        cosigned = CosignedCheckpoint(
            name=cosigner.name,
            vkey=data.vkey,
            size=size,
            root_hash=base64.b64encode(root).decode(),
            time=stamp,
            note=data.note,
        )
        if not await store.cosignatures.keep(table, cosigned):
            raise RuleError("the table keeps no more cosigners", field="vkey")
        return cosigned

    @staticmethod
    async def _signed_by_this_log(
        table: TablePath, store: AuditStore, note: str
    ) -> tuple[int, bytes]:
        if not note.startswith(f"{store.log_name}/{table}\n"):
            raise RuleError(f"the note is not of log {store.log_name}/{table}", field="note")
        served = {"keys": [msgspec.to_builtins(k) for k in await store.public_keys()]}
        for key in trusted_keys(served, store.root_key_id).values():
            try:
                size, root, _ = open_note(note, store.log_name, key)
            except NoteError:
                continue
            return size, root
        raise RuleError("the note is not signed by this log's key", field="note")
