"""A new table: ``POST /v1/tables`` (its log is read through ``entries``,
``checkpoints`` and ``verify``; its seed sessions through ``seeds``)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, post
from litestar.params import Body

from fairroll.api.controllers.params import (
    OptionalBody,
    TablePath,
)
from fairroll.api.problems import problem_responses
from fairroll.audit import (
    AuditStore,
)
from fairroll.audit.entry import TablePolicy
from fairroll.rules import RuleError

__all__ = ["NewTableController", "TablePath"]


class TableCreated(msgspec.Struct, frozen=True, kw_only=True):
    """A new table. The write key is shown once: fairroll keeps only its SHA-256."""

    table: str
    write_key: str
    policy: TablePolicy
    note: str


class NewTable(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A table to create; the body may be left out (a table that takes every roll)."""

    policy: TablePolicy = msgspec.field(default_factory=TablePolicy)


class NewTableController(Controller):
    path = "/v1/tables"
    tags = ("audit",)

    @post(
        operation_id="createTable",
        summary="Create a table with an unguessable id and a write key (shown once)",
        description="With `policy.chosen_seeds: false` the table refuses caller-chosen "
        "seeds (reproducible, not fair: they can be ground), and with "
        "`policy.supplied_dice: false` dice rolled elsewhere; such a policy is the "
        "table's first log entry (`table.policy`), so verifiers hold the table to it.",
        status_code=201,
        responses=problem_responses(400, 415, 422, 429, 503),
        operation_class=OptionalBody,
    )
    async def create_table(
        self,
        request: Request[Any, Any, Any],
        store: AuditStore,
        data: Annotated[NewTable | None, Body(description="The table's policy (optional).")] = None,
    ) -> TableCreated:
        if data is None and (await request.body()).strip():
            raise RuleError("the body is a table (a JSON object), or nothing", field="body")
        policy = data.policy if data is not None else TablePolicy()
        table, write_key = await store.create_table(policy)
        return TableCreated(
            table=table,
            write_key=write_key,
            policy=policy,
            note=(
                "Rolls on this table need 'Authorization: Bearer <write_key>'. Anyone who "
                "knows the table id can read its entries, export and verify it."
            ),
        )
