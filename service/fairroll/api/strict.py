"""Strict request bodies: JSON types must match the schema exactly.

Litestar converts a decoded body to the handler's type in msgspec's lax mode,
which accepts ``0`` for ``false`` and ``"3"`` for ``3``. The spec promises
booleans and integers, so every body is first converted strictly to the same
type; a mismatch is the same 422 a schema breach gets. JSON Schema counts
``9.0`` as the integer 9, so integral numbers are read as integers first.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ClientException, ValidationException

__all__ = ["strict_body"]


async def strict_body(request: Request[Any, Any, Any]) -> None:
    """``before_request`` hook: decode the body strictly when the handler takes ``data``."""
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None or data.annotation in (bytes, str):  # not a JSON body (NDJSON uploads)
        return
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


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


_JSON = msgspec.json.Decoder(float_hook=_number)
