"""A table's audit entries read back: a page, one entry, the NDJSON export and the
live event stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.datastructures import ResponseHeader
from litestar.exceptions import NotFoundException, ServiceUnavailableException
from litestar.params import Parameter
from litestar.response import Stream

from fairroll.api.caching import CACHE_HEADERS, NOT_MODIFIED, cached
from fairroll.api.controllers.params import (
    LAST_SEQ,
    After,
    FromSeq,
    Limit,
    Seq,
    TablePath,
    ToSeq,
)
from fairroll.api.problems import problem_responses
from fairroll.api.sse import EventStream, last_event_id
from fairroll.audit import (
    AuditStore,
    Entry,
)
from fairroll.mechanics import Words, words_or_none
from fairroll.play.events import TableEvents, TooManySubscribersError
from fairroll.rules import RuleError

__all__ = ["STOPPED_HEADER", "EntriesController", "EntryPage"]


class EntryPage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of entries; ``next_after`` is the ``after`` of the next page (null at the end).
    ``words`` says each entry in words, in the same order (kept apart from the entries,
    whose bytes are signed); null for a mechanic this server does not declare."""

    table: str
    head_seq: int
    entries: list[Entry]
    words: list[Words | None]
    next_after: int | None
    #: Appends to the table are stopped (its log went back or was rewritten): why. What
    #: survives is still served.
    stopped: str | None = None


#: On an export of a table whose appends are stopped: why.
STOPPED_HEADER = "Fairroll-Table-Stopped"


def _ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode().replace("\n", " ")


class EntriesController(Controller):
    """A table's entries, as pages, one by one, exported, or as they are appended."""

    path = "/v1/tables/{table:str}"
    tags = ("audit",)

    @get(
        "/entries",
        operation_id="listTableEntries",
        summary="Read a table's audit entries, a page at a time",
        responses={**problem_responses(400, 422, 429, 503), **NOT_MODIFIED},
        response_headers=CACHE_HEADERS,
    )
    async def list_entries(
        self,
        request: Request[Any, Any, Any],
        table: TablePath,
        store: AuditStore,
        after: After = 0,
        limit: Limit = 100,
    ) -> Response[EntryPage]:
        head, stopped = await store.read_head(table)
        entries = await store.entries(table, after=after, limit=limit)
        last = entries[-1].seq if entries else after
        page = EntryPage(
            table=table,
            head_seq=head.seq,
            entries=entries,
            words=[words_or_none(e.mechanic, e.request, e.outcome) for e in entries],
            next_after=last if entries and last < head.seq else None,
            stopped=stopped.args[0] if stopped is not None else None,
        )
        return cached(request, msgspec.json.encode(page), "application/json")

    @get(
        "/events",
        operation_id="streamTableEvents",
        summary="The table's entries as they are appended, as Server-Sent Events",
        description="One `entry` event per audit entry (`id:` its seq; `data:` `{entry, "
        "words}`), from any replica; `Last-Event-ID` or `after` resumes after that seq "
        "without a gap; a comment every 15 s as a heartbeat; with `checkpoint=true`, a "
        "`checkpoint` event (the table's signed checkpoint) after each burst; with "
        "`cosignatures=true`, a `cosignature` event (as `GET .../cosignatures` lists it) "
        "as each player's or witness's cosignature is kept.",
        media_type="text/event-stream",
        responses=problem_responses(400, 422, 503),
    )
    async def stream_events(
        self,
        request: Request[Any, Any, Any],
        table: TablePath,
        events: TableEvents,
        after: Annotated[
            int | None,
            Parameter(ge=0, le=LAST_SEQ, description="Resume after this seq (0: from the start)."),
        ] = None,
        checkpoint: Annotated[
            bool, Parameter(description="Send the signed checkpoint after each burst.")
        ] = False,
        cosignatures: Annotated[
            bool, Parameter(description="Send each cosignature as it is kept (live only).")
        ] = False,
    ) -> Stream:
        start = last_event_id(request.headers.get("last-event-id"), after)
        try:
            subscription = await events.subscribe(table, start, cosignatures=cosignatures)
        except TooManySubscribersError:
            raise ServiceUnavailableException(
                "this server follows as many live tables as it may: retry, or poll GET .../entries",
                headers={"Retry-After": "5"},
            ) from None
        return EventStream(subscription, checkpoints=checkpoint)

    @get(
        "/entries/{seq:int}",
        operation_id="getTableEntry",
        summary="Read one audit entry by its seq",
        description="An entry never changes: it is served with its `entry_hash` as ETag and "
        "`Cache-Control: public, max-age=31536000, immutable`.",
        responses={**problem_responses(400, 404, 422, 503), **NOT_MODIFIED},
        response_headers=CACHE_HEADERS,
    )
    async def get_entry(
        self, request: Request[Any, Any, Any], table: TablePath, seq: Seq, store: AuditStore
    ) -> Response[Entry]:
        entry = await store.entry(table, seq)
        if entry is None:
            raise NotFoundException(f"table {table!r} has no entry {seq}")
        body = msgspec.json.encode(entry)
        return cached(
            request, body, "application/json", etag=f'"{entry.entry_hash}"', immutable=True
        )

    @get(
        "/export",
        operation_id="exportTable",
        summary="Export a table's audit trail (or a seq range) as NDJSON, one entry a line",
        description="A table whose appends are stopped (its log went back or was "
        "rewritten) is still exported as far as its log survives, with the "
        "`Fairroll-Table-Stopped` header saying why.",
        media_type="application/x-ndjson",
        responses=problem_responses(400, 422, 429, 503),
        response_headers=[
            ResponseHeader(
                name=STOPPED_HEADER,
                description="Appends to the table are stopped: why (absent otherwise).",
                documentation_only=True,
            )
        ],
    )
    async def export(
        self,
        table: TablePath,
        store: AuditStore,
        from_seq: FromSeq = 1,
        to_seq: ToSeq = LAST_SEQ,
    ) -> Stream:
        if to_seq < from_seq:
            raise RuleError(
                f"to_seq ({to_seq}) is before from_seq ({from_seq}): no entry is in that range",
                field="to_seq",
            )
        # 503 before streaming when Redis is down; a stopped table's log is still served.
        _, stopped = await store.read_head(table)

        async def lines() -> AsyncIterator[bytes]:
            async for raw in store.raw_entries(table, after=from_seq - 1, until=to_seq):
                yield raw + b"\n"

        headers = {STOPPED_HEADER: _ascii(stopped.args[0])} if stopped is not None else {}
        return Stream(lines(), media_type="application/x-ndjson", headers=headers)
