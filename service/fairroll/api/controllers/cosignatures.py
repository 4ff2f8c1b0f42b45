"""Players and witnesses as cosigners: ``POST /v1/tables/{table}/cosignatures`` takes a
C2SP cosignature (``audit.cosignature``) of one of the table's checkpoints, and ``GET``
serves every cosigner's latest, so players compare views through the server; the
checkpoint note itself carries the cosignatures of its own tree as extra signature
lines (``GET .../checkpoint``). The server only relays: a player trusts the cosignatures
it checks itself, and compares notes over channels the operator does not run too.

A post needs a credential, so strangers can neither fake a player's name nor crowd the
players out: the table's write key (``Authorization: Bearer``), or an open seed session
of the table and its token (``session``, shown once when the session was started); on
an open table (no write key) a post with neither is kept too, as ``none``, in a small
pool of its own (``redis.cosignatures``). On an open table anyone may open a session, so
the poster's origin (its address, as the rate limit names it) holds only a few places of
the pools strangers reach there: a flood from one address churns its own."""

from __future__ import annotations

import base64
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post

from fairroll.api.controllers.params import TablePath
from fairroll.api.problems import PROBLEM_MEDIA_TYPE, InvalidParam, Problem, problem_responses
from fairroll.api.protection import client_of
from fairroll.api.services import Services
from fairroll.audit import AuditStore, merkle
from fairroll.audit.checkpoint import NoteError, open_note
from fairroll.audit.cosignature import (
    CosignatureError,
    VerifierKeyError,
    open_cosignature,
    parse_verifier_key,
)
from fairroll.audit.receipts import trusted_keys
from fairroll.audit.redis.cosignatures import (
    POOLS,
    SESSION_KEYS,
    CosignedCheckpoint,
    Credential,
    origin_of,
)
from fairroll.audit.sessions import SeedSessions
from fairroll.play.errors import ConflictError, KeyRefusedError, KeyRequiredError
from fairroll.rules import RuleError

__all__ = ["CosignaturesController", "CosignerSession", "NameTakenError", "NewCosignature"]

#: How far in the future a cosignature's time may be (clocks disagree a little).
SKEW_SECONDS = 300


class CosignerSession(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An open seed session of the table and the token its start answered with: what a
    player shows to cosign on a table whose write key it does not hold."""

    seed_id: Annotated[
        str, msgspec.Meta(pattern=r"^s[A-Za-z0-9_-]{16}$", description="The session's id.")
    ]
    token: Annotated[
        str,
        msgspec.Meta(
            min_length=16,
            max_length=128,
            description="The session's token, shown once in the answer that started it.",
        ),
    ]


class NameTakenError(ConflictError):
    """The cosigner's name is bound to another key on this table (a 409 naming ``vkey``)."""


def _name_taken(request: Request[Any, Any, Any], exc: NameTakenError) -> Response[Problem]:
    """A 409 as every conflict is, naming the field at fault as a 422 does."""
    return Response(
        Problem(
            type="urn:fairroll:problem:conflict",
            title="Conflict",
            status=409,
            detail=exc.detail,
            instance=request.url.path,
            invalid_params=[InvalidParam(name="vkey", reason=exc.detail)],
        ),
        status_code=409,
        media_type=PROBLEM_MEDIA_TYPE,
    )


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
    session: (
        Annotated[
            CosignerSession,
            msgspec.Meta(
                description="The player's credential where it holds no write key: an open "
                "seed session of this table and its token."
            ),
        ]
        | None
    ) = None


class Cosigned(msgspec.Struct, frozen=True, kw_only=True):
    """Every cosigner's latest cosignature of the table's checkpoints, largest first."""

    table: str
    cosignatures: list[CosignedCheckpoint]


class CosignaturesController(Controller):
    path = "/v1/tables/{table:str}/cosignatures"
    tags = ("audit",)
    exception_handlers = {NameTakenError: _name_taken}  # noqa: RUF012 (Litestar's layer)

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
        "is half of a proof of equivocation (`fairroll verify --equivocation`). A post "
        "needs the table's write key (`Authorization: Bearer`) or an open seed session of "
        "the table with the token its start answered (`session`); an open table also "
        "keeps a post with neither, as `credential: none`. A cosigner's name is bound to "
        "the key kept under it while the table keeps that cosigner: another key under "
        "that name is a 409 naming `vkey`, unless the name's key was kept with no "
        "credential or with a session no longer open, which a post with a credential "
        "takes over. A name is a label, not trust: clients count only the keys their "
        "player pinned. Each credential has a pool of its own, whose stalest cosigner "
        "makes room for a new one, and one client address holds only a few places of the "
        "pools strangers can feed; a session cosigns with at most "
        f'{SESSION_KEYS} keys (docs/audit.md, "Cosignatures").',
        status_code=201,
        responses=problem_responses(400, 401, 403, 409, 415, 422, 429, 503),
    )
    async def cosign(
        self,
        request: Request[Any, Any, Any],
        table: TablePath,
        store: AuditStore,
        sessions: SeedSessions,
        services: Services,
        data: NewCosignature,
    ) -> CosignedCheckpoint:
        credential = await self._credential(request, table, store, sessions, data.session)
        try:
            cosigner = parse_verifier_key(data.vkey)
            stamp = open_cosignature(data.note, data.vkey)
        except CosignatureError as exc:
            field = "vkey" if isinstance(exc, VerifierKeyError) else "note"
            raise RuleError(str(exc), field=field) from None
        if stamp > store.now() + SKEW_SECONDS:  # Redis's clock, not this server's
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
        seed_id = data.session.seed_id if credential == "session" and data.session else None
        # The client as the rate limit names it (the peer, or what the trusted proxies saw).
        origin = origin_of(client_of(request.scope, services.limits.trusted_proxy_hops))
        kept = await store.cosignatures.keep(table, cosigned, credential, seed_id, origin)
        if kept.status == "name":
            raise NameTakenError(
                f"the cosigner name {cosigner.name!r} is bound on table {table!r} to another "
                f"key ({kept.bound}): a name keeps the first key kept under it; cosign "
                "under a name of your own"
            )
        if kept.status == "session":
            raise RuleError(
                f"seed session {seed_id} cosigns with {SESSION_KEYS} keys already: cosign "
                "with one of them",
                field="vkey",
            )
        if kept.status == "full":  # pragma: no cover - only the server's own witnesses
            raise RuleError(
                f"the table keeps {POOLS['witness'][1]} witnesses already", field="vkey"
            )
        listed = {c.vkey: c for c in await store.cosignatures.listed(table)}
        return listed.get(data.vkey, cosigned)

    @staticmethod
    async def _credential(
        request: Request[Any, Any, Any],
        table: str,
        store: AuditStore,
        sessions: SeedSessions,
        session: CosignerSession | None,
    ) -> Credential:
        """What vouches for the poster: the table's write key, else an open session of the
        table and its token, else nothing (an open table's)."""
        header = request.headers.get("authorization") or ""
        key = header[7:].strip() if header.lower().startswith("bearer ") else None
        matches = await store.key_matches(table, key)
        if matches:
            return "write_key"
        if key is not None and matches is False and session is None:
            raise KeyRefusedError(f"that is not the write key of table {table!r}")
        if session is not None:
            if not await sessions.holds(table, session.seed_id, session.token):
                raise KeyRefusedError(
                    f"seed session {session.seed_id} is not an open session of table "
                    f"{table!r} with that token: cosign with the token its start answered, "
                    "while it is open"
                )
            return "session"
        if matches is None:
            return "none"
        raise KeyRequiredError(
            f"table {table!r} has a write key: cosign with it (Authorization: Bearer <key>) "
            "or with an open seed session of the table (session: {seed_id, token})"
        )

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
