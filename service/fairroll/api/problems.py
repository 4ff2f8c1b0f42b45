"""RFC 9457 problem+json responses for every error the API returns."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.types import ExceptionHandlersMap, HTTPResponseBodyEvent, HTTPResponseStartEvent, Send
from redis.exceptions import RedisError

from fairroll.audit import StoreUnavailableError
from fairroll.audit.redis.errors import KeyRetiredError
from fairroll.audit.store import NotDurableError, StoreFullError, TableFencedError
from fairroll.play.errors import (
    ConflictError,
    KeyRefusedError,
    KeyRequiredError,
    NonceConflictError,
    NotFoundError,
    PlayError,
)
from fairroll.randomness import DiceError
from fairroll.rules import RuleError
from fairroll.rules.dice.limits import FormulaSyntaxError

__all__ = [
    "CALC_ERRORS",
    "PROBLEM_MEDIA_TYPE",
    "ROLL_ERRORS",
    "InvalidParam",
    "Problem",
    "exception_handlers",
    "problem",
    "problem_responses",
    "send_problem",
]

PROBLEM_MEDIA_TYPE = "application/problem+json"
_TYPE = "urn:fairroll:problem:"
logger = logging.getLogger("fairroll.api")


class InvalidParam(msgspec.Struct, frozen=True, kw_only=True):
    """One field at fault: its location (``a.attribute``, ``dice.b[2]``) and why."""

    name: str
    reason: str


class Problem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An RFC 9457 problem document."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    invalid_params: list[InvalidParam] | None = None
    #: A 409 from a seed-session roll that expected another nonce: the one to use.
    nonce: int | None = None


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI declarations of the problem responses a handler can return."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM_MEDIA_TYPE,
            description=_DESCRIPTIONS[status],
            generate_examples=False,
        )
        for status in statuses
    }


def _respond(
    request: Request[Any, Any, Any],
    *,
    status: int,
    slug: str,
    title: str,
    detail: str,
    params: list[InvalidParam] | None = None,
    headers: dict[str, str] | None = None,
    nonce: int | None = None,
) -> Response[Problem]:
    return Response(
        Problem(
            type=_TYPE + slug,
            title=title,
            status=status,
            detail=detail,
            instance=request.url.path,
            invalid_params=params,
            nonce=nonce,
        ),
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Problem]:
    extra = exc.extra if isinstance(exc.extra, list) else []
    params = [
        InvalidParam(name=_field_of(item), reason=_reason_of(item, exc))
        for item in extra
        if isinstance(item, dict)
    ]
    detail = "; ".join(f"{p.name}: {p.reason}" for p in params) or exc.detail
    return _respond(
        request,
        status=422,
        slug="invalid-request",
        title="The request breaks the schema",
        detail=detail,
        params=params or None,
    )


def _reason_of(item: dict[str, Any], exc: ValidationException) -> str:
    return str(item.get("message", exc.detail))


def _field_of(item: dict[str, Any]) -> str:
    """The dotted field a validation error is about: ``a.attribute``, ``b.zz``."""
    key = str(item.get("key") or "")
    path = "" if key in ("", "data") else key
    message = str(item.get("message", ""))
    if message.startswith(("Object missing required field", "Object contains unknown field")):
        named = message.split("`")[1] if message.count("`") >= 2 else ""
        return f"{path}.{named}" if path else named
    return path or "body"


def _rule(request: Request[Any, Any, Any], exc: RuleError | DiceError) -> Response[Problem]:
    """A 422 naming the field at fault. A formula its dialect cannot read (``2d6+``) is a
    typo, not a roll the rules forbid, so it has a type and title of its own."""
    if isinstance(exc, DiceError):
        slug, title = "invalid-dice", "The supplied dice do not fit"
    elif isinstance(exc, FormulaSyntaxError):
        slug, title = "not-a-formula", "Not a formula"
    else:
        slug, title = "rule-violation", "Against the rules"
    return _respond(
        request,
        status=422,
        slug=slug,
        title=title,
        detail=str(exc),
        params=[InvalidParam(name=exc.field, reason=str(exc))],
    )


def _unavailable(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    if isinstance(exc, NotDurableError):
        logger.error("roll refused: %s; set appendonly yes and appendfsync always", exc)
        return _respond(
            request,
            status=503,
            slug="audit-store-not-durable",
            title="The audit store is not durable; nothing was recorded",
            detail=(
                f"Redis answered, but {str(exc).removeprefix('the audit store is ')}: it "
                "acknowledges appends that are not on disk, and no roll is made that a "
                "crash could take back. A retry cannot help until the operator sets "
                "appendonly yes and appendfsync always (docs/operations.md, "
                "FairrollNotDurable)."
            ),
            headers={"Retry-After": "30"},
        )
    logger.warning("audit store unavailable: %s", exc)
    if isinstance(exc, StoreFullError):
        return _respond(
            request,
            status=503,
            slug="storage-full",
            title="The audit store is nearly full; nothing was recorded",
            detail=str(exc),
            headers={"Retry-After": "60"},
        )
    if isinstance(exc, KeyRetiredError):
        logger.error("roll refused: %s", exc)
        return _respond(
            request,
            status=503,
            slug="signing-key-retired",
            title="This server's signing key was retired; nothing was recorded",
            detail=(
                f"{exc}. Redis answered; a retry cannot help until the operator deploys the "
                "new key (docs/operations.md, key rotation)."
            ),
        )
    if isinstance(exc, TableFencedError):
        return _respond(
            request,
            status=503,
            slug="table-stopped",
            title="The table's log went back; appends are stopped",
            detail=str(exc),
        )
    # A bare RedisError never comes from an append (the store wraps those): not recorded.
    recorded = exc.recorded if isinstance(exc, StoreUnavailableError) else False
    if recorded is False:
        detail = (
            "The audit store (Redis) did not answer; nothing was recorded, and no roll is "
            f"made that cannot be recorded ({exc}). Retry shortly."
        )
    else:
        detail = (
            "The audit store (Redis) did not confirm the roll in time: it may have been "
            "recorded. Retry with the same Idempotency-Key to get the recorded roll, or "
            "the first one, never two."
        )
    return _respond(
        request,
        status=503,
        slug="audit-store-unavailable",
        title="The audit store is unavailable",
        detail=detail,
        headers={"Retry-After": "1"},
    )


def _http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Problem]:
    if isinstance(exc, ValidationException):
        return _validation(request, exc)
    status = exc.status_code
    title = _TITLES.get(status, "Request failed")
    slug = title.lower().replace(" ", "-")
    if status == 400:  # schema breaches are ValidationExceptions (422): this is the body
        title, slug = "Malformed JSON", "malformed-json"
    return _respond(
        request,
        status=status,
        slug=slug,
        title=title,
        detail=exc.detail,
        headers=exc.headers,
        nonce=getattr(exc, "nonce", None),
    )


#: Each refusal of play, by its status.
_PLAY_STATUS: dict[type[PlayError], int] = {
    KeyRequiredError: 401,
    KeyRefusedError: 403,
    NotFoundError: 404,
    ConflictError: 409,
}


def _play(request: Request[Any, Any, Any], exc: PlayError) -> Response[Problem]:
    status = next(s for kind, s in _PLAY_STATUS.items() if isinstance(exc, kind))
    title = _TITLES[status]
    headers = {"WWW-Authenticate": 'Bearer realm="fairroll"'} if status == 401 else None
    return _respond(
        request,
        status=status,
        slug=title.lower().replace(" ", "-"),
        title=title,
        detail=exc.detail,
        headers=headers,
        nonce=exc.nonce if isinstance(exc, NonceConflictError) else None,
    )


def _internal(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _respond(
        request,
        status=500,
        slug="internal-error",
        title="Internal error",
        detail="fairroll failed to handle this request; it has been logged.",
    )


exception_handlers: ExceptionHandlersMap = {
    HTTPException: _http,
    PlayError: _play,
    RuleError: _rule,
    DiceError: _rule,
    StoreUnavailableError: _unavailable,
    RedisError: _unavailable,
    Exception: _internal,
}

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    429: "Too many requests",
    500: "Internal error",
    503: "Service unavailable",
}

_DESCRIPTIONS = {
    400: "Malformed request: the body is not valid JSON, or is nested too deeply.",
    401: "The table has a write key: send it as `Authorization: Bearer <key>`.",
    403: "The key is not this table's write key, or the table is closed.",
    404: "No such table entry or seed session.",
    409: "The seed session was revealed, or is at another nonce than the one the request "
    "gave (the problem's `nonce` is the right one).",
    413: "The request body is larger than the server accepts.",
    415: "The body is not sent as JSON (`Content-Type: application/json`).",
    422: "The request breaks the schema or the rules; `invalid_params` names the field.",
    429: (
        "This client's token bucket is spent (a roll costs 1, odds 4, an export 5, a "
        "verification 10); see `Retry-After`."
    ),
    503: (
        "The audit store is unreachable or did not confirm the roll in time (`detail` says "
        "whether it may have been recorded: then retry with the same `Idempotency-Key`), "
        "or a calculation was stopped at its deadline or found every worker busy."
    ),
}

#: Every error a roll can answer: bad body, too large, no or wrong table key, rule breach,
#: audit store down.
ROLL_ERRORS = problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503)
#: Every error a calculation (odds, sheets, rewards) can answer.
CALC_ERRORS = problem_responses(400, 413, 415, 422, 429, 503)


#: A problem answered below the framework: (status, headers, body).
RawProblem = tuple[int, list[tuple[bytes, bytes]], bytes]


def problem(status: int, slug: str, title: str, detail: str, retry_after: int) -> RawProblem:
    """An RFC 9457 problem answered below the framework: (status, headers, body)."""
    body = msgspec.json.encode(
        {"type": f"urn:fairroll:problem:{slug}", "title": title, "status": status, "detail": detail}
    )
    headers = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry_after).encode()),
    ]
    return status, headers, body


async def send_problem(send: Send, answer: RawProblem) -> None:
    status, headers, body = answer
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": status,
        "headers": headers,
    }
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(start)
    await send(end)
