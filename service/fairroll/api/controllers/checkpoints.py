"""A table's signed tree: its checkpoint (JSON or signed note), inclusion and
consistency proofs, and the base an archived log starts after."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, Schema
from litestar.params import Parameter

from fairroll.api.caching import CACHE_HEADERS, NOT_MODIFIED, cached
from fairroll.api.controllers.params import (
    LAST_SEQ,
    Seq,
    TablePath,
    TreeSize,
)
from fairroll.api.problems import problem_responses
from fairroll.audit import (
    AuditStore,
    Checkpoint,
)
from fairroll.rules import RuleError

__all__ = ["CheckpointsController", "ConsistencyProof", "InclusionProof", "cosignature_lines"]


class InclusionProof(msgspec.Struct, frozen=True, kw_only=True):
    """Entry ``seq`` is leaf ``seq - 1`` of the tree of ``size``: hashing ``leaf_hash`` up
    with ``proof`` (RFC 9162 section 2.1.3.2) gives that tree's root. Hashes in base64."""

    table: str
    seq: int
    size: int
    leaf_hash: str
    proof: list[str]


class ConsistencyProof(msgspec.Struct, frozen=True, kw_only=True):
    """The tree of ``from_size`` is a prefix of the tree of ``to_size`` (RFC 9162 section
    2.1.4.2). Hashes in base64."""

    table: str
    from_size: int
    to_size: int
    proof: list[str]


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _wants_note(request: Request[Any, Any, Any]) -> bool:
    accept = request.headers.get("accept", "")
    return "text/plain" in accept and "application/json" not in accept


@dataclass
class _NoteToo(Operation):
    """The checkpoint is also served as its signed note, as ``text/plain``."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        content = getattr(ok, "content", None)
        if content is not None:
            content["text/plain"] = OpenAPIMediaType(
                schema=Schema(type=OpenAPIType.STRING, description="The signed note.")
            )


class CheckpointsController(Controller):
    """A table's checkpoint, its proofs and its base."""

    path = "/v1/tables/{table:str}"
    tags = ("audit",)

    @get(
        "/checkpoint",
        operation_id="getTableCheckpoint",
        summary="The table's size and Merkle root, signed now (keep it to check the table later)",
        description="A C2SP tlog-checkpoint in a C2SP signed note (`text`); with "
        "`Accept: text/plain` the answer is the note itself. The server never signs a "
        "checkpoint inconsistent with the last one signed for the table: it stops the "
        "table instead (503 `table-stopped`).",
        responses={**problem_responses(400, 422, 503), **NOT_MODIFIED},
        response_headers=CACHE_HEADERS,
        operation_class=_NoteToo,
    )
    async def checkpoint(
        self, request: Request[Any, Any, Any], table: TablePath, store: AuditStore
    ) -> Response[Checkpoint]:
        checkpoint = await store.checkpoint(table)
        # The cosignatures of this very tree ride on the note as extra signature lines.
        lines = [
            line
            for cosigned in await store.cosignatures.listed(table)
            if cosigned.size == checkpoint.size and cosigned.root_hash == checkpoint.root_hash
            for line in cosignature_lines(cosigned.note, checkpoint.text)
        ]
        if lines:
            text = checkpoint.text + "".join(f"{line}\n" for line in lines)
            checkpoint = msgspec.structs.replace(checkpoint, text=text)
        if _wants_note(request):
            return cached(request, checkpoint.text.encode(), "text/plain")
        return cached(request, msgspec.json.encode(checkpoint), "application/json")

    @get(
        "/proofs/inclusion",
        operation_id="proveTableInclusion",
        summary="An RFC 9162 inclusion proof: entry `seq` is in the table's tree of `size`",
        description="Check it against a checkpoint of that size: a receipt's `leaf_hash` "
        "hashed up the proof must give the checkpoint's root.",
        responses=problem_responses(400, 422, 429, 503),
    )
    async def prove_inclusion(
        self, table: TablePath, store: AuditStore, seq: Seq, size: TreeSize
    ) -> InclusionProof:
        if seq > size:
            raise RuleError(f"entry {seq} is not in a tree of {size} entries", field="seq")
        try:
            leaf, proof = await store.inclusion_proof(table, seq, size)
        except ValueError as exc:
            raise RuleError(str(exc), field="size") from None
        return InclusionProof(
            table=table, seq=seq, size=size, leaf_hash=_b64(leaf), proof=[_b64(h) for h in proof]
        )

    @get(
        "/proofs/consistency",
        operation_id="proveTableConsistency",
        summary="An RFC 9162 consistency proof: the tree of `from` is a prefix of `to`",
        responses=problem_responses(400, 422, 429, 503),
    )
    async def prove_consistency(
        self,
        table: TablePath,
        store: AuditStore,
        from_size: Annotated[
            int, Parameter(query="from", ge=1, le=LAST_SEQ, description="The older size.")
        ],
        to_size: Annotated[
            int, Parameter(query="to", ge=1, le=LAST_SEQ, description="The newer size.")
        ],
    ) -> ConsistencyProof:
        if to_size < from_size:
            raise RuleError(f"to ({to_size}) is smaller than from ({from_size})", field="to")
        try:
            proof = await store.consistency_proof(table, from_size, to_size)
        except ValueError as exc:
            raise RuleError(str(exc), field="to") from None
        return ConsistencyProof(
            table=table, from_size=from_size, to_size=to_size, proof=[_b64(h) for h in proof]
        )

    @get(
        "/base",
        operation_id="getTableBase",
        summary="The signed checkpoint a table's log starts after (its archive base)",
        description="A table never archived starts after seq 0, on the genesis hash.",
        responses=problem_responses(400, 422, 503),
    )
    async def get_base(self, table: TablePath, store: AuditStore) -> Checkpoint:
        base = await store.base(table)
        return base if base is not None else await store.genesis(table)


def cosignature_lines(cosigned: str, note: str) -> list[str]:
    """The signature lines of ``cosigned`` (a cosigned note of the same tree) that
    ``note`` does not carry: the cosigners' (same body, so their signatures hold)."""
    body, _, signatures = cosigned.partition("\n\n")
    if not note.startswith(body + "\n\n"):
        return []
    have = set(note.split("\n"))
    return [line for line in signatures.split("\n") if line and line not in have]
