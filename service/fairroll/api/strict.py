"""Strict request bodies, decoded once: JSON types must match the schema exactly.

Litestar would decode a body to builtins and convert it to the handler's type in
msgspec's lax mode, which accepts ``0`` for ``false`` and ``"3"`` for ``3``. The
spec promises booleans and integers, so each route's body is decoded here instead,
strictly, straight to the handler's type, by a decoder built at startup
(:class:`StrictDecoders`); the value is handed to Litestar as the request's JSON, so
the body is not read twice. A mismatch is the same 422 a schema breach gets. JSON
Schema counts ``9.0`` as the integer 9, so a body the typed decoder refuses is read
again with integral numbers as integers before it is refused. A body with a key twice
in one object is refused (400): parsers disagree on which value wins.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Litestar, Request
from litestar.exceptions import ClientException, ValidationException
from litestar.utils.scope.state import ScopeState

from fairroll.audit.verify import DuplicateKeyError, loads_strict

__all__ = [
    "NDJSON_TYPES",
    "NESTED_TOO_DEEPLY",
    "StrictDecoders",
    "is_json",
    "media_type_of",
    "strict_body",
]

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


class StrictDecoders:
    """Each route's body decoder, built once at startup: the handler's ``data`` type,
    decoded strictly from the bytes in one pass (a route without ``data`` has none)."""

    def __init__(self, app: Litestar) -> None:
        self._by_handler: dict[int, tuple[msgspec.json.Decoder[Any], Any, bool]] = {}
        for route in app.routes:
            for handler in getattr(route, "route_handlers", ()):
                data = handler.parsed_fn_signature.parameters.get("data")
                if data is not None:
                    decoder = msgspec.json.Decoder(data.annotation, strict=True)
                    self._by_handler[id(handler)] = (decoder, data.annotation, data.default is None)

    def of(self, handler: object) -> tuple[msgspec.json.Decoder[Any], Any, bool] | None:
        return self._by_handler.get(id(handler))


async def strict_body(request: Request[Any, Any, Any]) -> None:
    """``before_request`` hook: a JSON body must say it is JSON (415 otherwise), and is
    decoded strictly, once, when the handler takes ``data``; the handler gets that value
    (``Request.json()`` reads the value kept here, not the body again)."""
    decoders: StrictDecoders | None = getattr(request.app.state, "decoders", None)
    found = decoders.of(request.route_handler) if decoders is not None else None
    if found is None:
        return
    decoder, annotation, optional = found
    body = await request.body()
    if optional and not body:
        return  # an optional body left out
    if not is_json(media_type_of(request)):
        raise ClientException(
            detail="send the body as Content-Type: application/json",
            status_code=415,
            headers={"Accept-Post": "application/json"},
        )
    try:
        value = decoder.decode(body)
    except msgspec.ValidationError:
        # JSON Schema counts 9.0 as the integer 9: read integral numbers as integers and
        # convert, strictly; a body that still fails is refused with that error.
        value = _slow(request, body, annotation)
    except msgspec.DecodeError as exc:
        raise ClientException(detail=str(exc)) from None
    except RecursionError:
        raise ClientException(detail=NESTED_TOO_DEEPLY) from None
    if _may_repeat_a_key(body):
        try:  # a key twice means different things to different parsers: refuse it
            loads_strict(body)
        except DuplicateKeyError as exc:
            raise ClientException(detail=f"the JSON body is ambiguous: {exc}") from None
        except (ValueError, RecursionError):
            pass  # msgspec read it; Python's json may be stricter about what is not a key
    # Where Litestar's Request.json() (and so a handler's ``data``) reads a decoded body.
    ScopeState.from_scope(request.scope).json = value


def _slow(request: Request[Any, Any, Any], body: bytes, annotation: Any) -> Any:
    try:
        return msgspec.convert(_JSON.decode(body), annotation, strict=True)
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


#: Every string of a JSON text, and whether a colon follows it (then it is a key). Strings
#: are matched whole, so the scan stays aligned on a valid text.
_STRINGS = re.compile(rb'"([^"\\]*(?:\\.[^"\\]*)*)"\s*(:?)')


def _may_repeat_a_key(body: bytes) -> bool:
    """Whether ``body`` (valid JSON) may hold a key twice in one object. Keys written with
    an escape (``"\\u0061"`` is ``"a"``) send it to the exact check. Else it is exact: no
    key written twice anywhere (a regex scan: ``benchmarks/decode_cost.py``), or as many
    keys in the text as in the objects it decodes to (a decoder keeps one of each repeated
    key)."""
    keys = [key for key, colon in _STRINGS.findall(body) if colon]
    if any(b"\\" in key for key in keys):
        return True
    if len(set(keys)) == len(keys):
        return False
    try:
        return _count_keys(msgspec.json.decode(body)) != len(keys)
    except RecursionError:
        return True


def _count_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_keys(v) for v in value)
    return 0


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


_JSON = msgspec.json.Decoder(float_hook=_number)
