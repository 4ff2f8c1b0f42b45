"""Verification on the server: a table's log (incremental, in a compute worker)
and an uploaded NDJSON export."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.exceptions import ClientException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, Operation, RequestBody, Schema
from litestar.params import Parameter

from fairroll.api.controllers.params import (
    TablePath,
)
from fairroll.api.problems import CALC_ERRORS, problem_responses
from fairroll.api.services import Services
from fairroll.api.strict import NDJSON_TYPES, media_type_of
from fairroll.audit import (
    AuditStore,
    Trust,
    VerifyReport,
    verify_entries,
)
from fairroll.audit.sessions import (
    SeedSessions,
)
from fairroll.mechanics import replay_entry
from fairroll.play.verification import verify_table
from fairroll.rules import RuleError

__all__ = ["TableVerificationController", "VerifyController"]


class TableVerificationController(Controller):
    """A table's log verified where it is kept, a part at a time."""

    path = "/v1/tables/{table:str}"
    tags = ("audit",)

    @get(
        "/verification",
        operation_id="verifyTable",
        summary="Verify a table's chain, signatures, seeds and outcomes on the server",
        description=(
            "Incremental: each verification goes on from where the last one stopped, for "
            "at most half the calculation deadline. At the head it answers 200 and the "
            "report of the whole log; stopped short it answers 202 (with Retry-After) and "
            "the report of the part verified so far, `complete: false`: ask again."
        ),
        responses={
            **problem_responses(400, 422, 429, 503),
            202: ResponseSpec(
                data_container=VerifyReport,
                description="Verified part of the way: ask again to go on.",
            ),
        },
    )
    async def verify(
        self,
        table: TablePath,
        store: AuditStore,
        sessions: SeedSessions,
        services: Services,
        full: Annotated[
            bool,
            Parameter(
                description="Verify the whole log again from seq 1, not on from where the "
                "last verification stopped."
            ),
        ] = False,
    ) -> Response[VerifyReport]:
        """The log is read a page at a time from the kept state on (``play.verification``);
        the request itself runs in a compute worker."""
        budget = services.limits.verification_seconds
        report = await verify_table(store, sessions, table, budget, full=full)
        if report.complete:
            return Response(report)
        return Response(report, status_code=202, headers={"Retry-After": "1"})


MAX_VERIFY_BYTES = 32 * 1024 * 1024
ANCHOR = re.compile(r"[0-9]{1,16}:[0-9a-f]{64}")
Anchor = Annotated[
    str,
    Parameter(
        pattern=r"^[0-9]{1,16}:[0-9a-f]{64}$",
        max_length=81,
        description="A kept checkpoint or receipt as 'seq:entry_hash'; the chain must hold it.",
    ),
]


@dataclass
class _NdjsonUpload(Operation):
    """The operation takes an NDJSON export as its raw body."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            content={"application/x-ndjson": OpenAPIMediaType(schema=Schema())},
            description="An export: one audit entry (JSON) per line, in seq order.",
            required=True,
        )


class VerifyController(Controller):
    path = "/v1/verify"
    tags = ("audit",)

    @post(
        operation_id="verifyExport",
        summary="Verify an uploaded NDJSON export: chain, signatures, seeds, outcomes, anchors",
        status_code=200,
        request_max_body_size=MAX_VERIFY_BYTES,
        responses=CALC_ERRORS,
        operation_class=_NdjsonUpload,
    )
    async def verify_export(
        self,
        request: Request[Any, Any, Any],
        store: AuditStore,
        anchor: Annotated[list[Anchor] | None, Parameter(max_items=100)] = None,
        base: Annotated[
            str | None,
            Parameter(
                pattern=r"^[0-9]{1,16}:[0-9a-f]{64}$",
                max_length=81,
                description="An archived log's base as 'seq:entry_hash' (GET .../base): the "
                "export must start right after it and chain on it.",
            ),
        ] = None,
        root: Annotated[
            str | None,
            Parameter(
                pattern=r"^ed25519:[0-9a-f]{16}$",
                description="The root key id to trust keys from (default: this server's).",
            ),
        ] = None,
    ) -> VerifyReport:
        public_keys = await store.public_keys()
        anchors = []
        for index, text in enumerate(anchor or []):
            if not ANCHOR.fullmatch(text):
                raise RuleError(
                    f"anchor {text!r} is not 'seq:entry_hash'", field=f"anchor[{index}]"
                )
            seq, _, entry_hash = text.partition(":")
            anchors.append((int(seq), entry_hash))
        if media_type_of(request) not in NDJSON_TYPES:
            raise ClientException(
                detail="send the export as Content-Type: application/x-ndjson",
                status_code=415,
                headers={"Accept-Post": ", ".join(NDJSON_TYPES)},
            )
        body = await request.body()
        if not body.strip():
            raise RuleError("upload an export: one audit entry (JSON) per line", field="body")
        start = None
        if base is not None:
            seq, _, entry_hash = base.partition(":")
            start = (int(seq), entry_hash)
        return verify_entries(
            body.splitlines(),
            Trust.rooted(public_keys, root or store.root_key_id, anchors=anchors, base=start),
            replay=replay_entry,
        )
