"""Reading a table's audit trail back: entries, one entry, NDJSON export, verification."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.exceptions import ClientException, NotFoundException, ServiceUnavailableException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import Body, Parameter
from litestar.response import Stream

from fairroll.api.caching import CACHE_HEADERS, NOT_MODIFIED, cached
from fairroll.api.problems import CALC_ERRORS, problem_responses
from fairroll.api.sse import EventStream, last_event_id
from fairroll.api.strict import NDJSON_TYPES, media_type_of
from fairroll.audit import (
    AuditStore,
    Checkpoint,
    Entry,
    PublicKey,
    Trust,
    VerifyReport,
    verify_entries,
)
from fairroll.audit.checkpoint import note_key
from fairroll.audit.entry import TablePolicy, receipt_of
from fairroll.audit.sessions import (
    DEFAULT_CHAIN_LENGTH,
    SeedSessions,
    SessionError,
    SessionKind,
    SessionStatus,
)
from fairroll.chain import MAX_LENGTH
from fairroll.mechanics import Words, replay_entry, words_or_none
from fairroll.play.events import TableEvents, TooManySubscribersError
from fairroll.play.rolls import Roller
from fairroll.play.verification import verify_table
from fairroll.rules import RuleError
from fairroll.rules.vocabulary import Name

__all__ = ["KeysController", "NewTableController", "TablesController", "VerifyController"]

Seq = Annotated[int, Parameter(ge=1, le=2**53, description="The entry's sequence number.")]
After = Annotated[
    int, Parameter(ge=0, le=2**53, description="Return entries with seq greater than this.")
]
FromSeq = Annotated[int, Parameter(ge=1, le=2**53, description="First seq to export.")]
LAST_SEQ = 2**53
ToSeq = Annotated[
    int, Parameter(ge=1, le=LAST_SEQ, description="Last seq to export (default: the end).")
]
Limit = Annotated[int, Parameter(ge=1, le=500, description="Most entries in one page.")]
TablePath = Annotated[
    str,
    Parameter(
        min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="The table's name."
    ),
]


SeedId = Annotated[
    str, Parameter(pattern=r"^s[A-Za-z0-9_-]{16}$", description="The seed session's id.")
]


async def _session(pending: Awaitable[SessionStatus]) -> SessionStatus:
    try:
        return await pending
    except SessionError as exc:
        raise NotFoundException(str(exc)) from None


class TableCreated(msgspec.Struct, frozen=True, kw_only=True):
    """A new table. The write key is shown once: fairroll keeps only its SHA-256."""

    table: str
    write_key: str
    policy: TablePolicy
    note: str


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


class NewTable(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A table to create; the body may be left out (a table that takes every roll)."""

    policy: TablePolicy = msgspec.field(default_factory=TablePolicy)


@dataclass
class _OptionalBody(Operation):
    """The body may be left out: not required, and its schema the struct (no null)."""

    def __post_init__(self) -> None:
        body = self.request_body
        if isinstance(body, RequestBody):
            body.required = False
            for media in body.content.values():
                schema = media.schema
                if isinstance(schema, Schema) and schema.one_of:
                    media.schema = schema.one_of[0]


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
        operation_class=_OptionalBody,
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


TreeSize = Annotated[
    int, Parameter(ge=1, le=LAST_SEQ, description="The size of the tree (a checkpoint's).")
]


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


#: On an export of a table whose appends are stopped: why.
STOPPED_HEADER = "Fairroll-Table-Stopped"


def _ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode().replace("\n", " ")


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


class TablesController(Controller):
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
        operation_class=_OptionalBody,
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
            for line in _cosignature_lines(cosigned.note, checkpoint.text)
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
        request: Request[Any, Any, Any],
        table: TablePath,
        store: AuditStore,
        sessions: SeedSessions,
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
        budget: float = request.app.state.verification_seconds
        report = await verify_table(store, sessions, table, budget, full=full)
        if report.complete:
            return Response(report)
        return Response(report, status_code=202, headers={"Retry-After": "1"})

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


def _cosignature_lines(cosigned: str, note: str) -> list[str]:
    """The signature lines of ``cosigned`` (a cosigned note of the same tree) that
    ``note`` does not carry: the cosigners' (same body, so their signatures hold)."""
    body, _, signatures = cosigned.partition("\n\n")
    if not note.startswith(body + "\n\n"):
        return []
    have = set(note.split("\n"))
    return [line for line in signatures.split("\n") if line and line not in have]


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


class KeyList(msgspec.Struct, frozen=True, kw_only=True):
    """Every public key that has signed entries, by key id; a convenience, not a trust
    anchor: each table's log publishes its keys under ``root`` (pin that fingerprint)."""

    root: str
    keys: list[PublicKey]


class KeysController(Controller):
    path = "/v1/keys"
    tags = ("audit",)

    @get(operation_id="listPublicKeys", summary="The public keys that sign audit entries")
    async def list_keys(self, store: AuditStore) -> KeyList:
        keys = await store.public_keys()
        return KeyList(
            root=store.root_key_id,
            keys=[
                msgspec.structs.replace(key, note_key=note_key(store.log_name, key.public_key))
                for key in keys
            ],
        )
