"""Strict request bodies: JSON types must match the schema exactly.

Litestar converts a decoded body to the handler's type in msgspec's lax mode,
which accepts ``0`` for ``false`` and ``"3"`` for ``3``. The spec promises
booleans and integers, so every body is first converted strictly to the same
type; a mismatch is the same 422 a schema breach gets. JSON Schema counts
``9.0`` as the integer 9, so integral numbers are read as integers first. A body
with a key twice in one object is refused (400): parsers disagree on which value wins.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ClientException, ValidationException

from fairroll.audit.verify import DuplicateKeyError, loads_strict

__all__ = ["NDJSON_TYPES", "NESTED_TOO_DEEPLY", "is_json", "media_type_of", "strict_body"]

NESTED_TOO_DEEPLY = "the JSON is nested too deeply to be a request"


#: Media types an upload of NDJSON (``POST /v1/verify``) may be sent as.
NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/json")


def media_type_of(request: Request[Any, Any, Any]) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def is_json(media_type: str) -> bool:
    """``application/json`` or a ``+json`` type (``application/merge-patch+json``...)."""
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


async def strict_body(request: Request[Any, Any, Any]) -> None:
    """``before_request`` hook: a JSON body must say it is JSON (415 otherwise), and is
    decoded strictly when the handler takes ``data``."""
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None:
        return
    if data.default is None and not await request.body():
        return  # an optional body left out
    if not is_json(media_type_of(request)):
        raise ClientException(
            detail="send the body as Content-Type: application/json",
            status_code=415,
            headers={"Accept-Post": "application/json"},
        )
    body = await request.body()
    try:
        msgspec.convert(_JSON.decode(body), data.annotation, strict=True)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$")
        key = path.rstrip("`").lstrip(".")
        raise ValidationException(
            detail=f"Validation failed for {request.method} {request.url.path}",
            extra=[{"message": message, "key": key or "data", "source": "body"}],
        ) from None
    except msgspec.DecodeError as exc:
        raise ClientException(detail=str(exc)) from None
    except RecursionError:
        raise ClientException(detail=NESTED_TOO_DEEPLY) from None
    try:  # a key twice means different things to different parsers: refuse it
        loads_strict(body)
    except DuplicateKeyError as exc:
        raise ClientException(detail=f"the JSON body is ambiguous: {exc}") from None
    except (ValueError, RecursionError):
        pass  # msgspec read it; Python's json may be stricter about what is not a key


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


_JSON = msgspec.json.Decoder(float_hook=_number)
