"""HTTP that helps a cache: entity tags, ``304 Not Modified`` and ``Cache-Control``.

An audit entry never changes once written: ``entries/{seq}`` is served with its
``entry_hash`` as a strong entity tag and ``Cache-Control: public, max-age=31536000,
immutable``. A page of entries and a checkpoint change as the table grows: their
entity tag is the SHA-256 of the bytes sent (one per representation: a checkpoint as
JSON and as its signed note differ), with ``Cache-Control: no-cache`` (a cache keeps
them and asks again, answered ``304`` while nothing changed). ``If-None-Match`` is
compared weakly, as RFC 9110 section 13.1.2 asks of a GET.
"""

from __future__ import annotations

import hashlib
from typing import Any

from litestar import Request, Response
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec

__all__ = [
    "CACHE_HEADERS",
    "IMMUTABLE",
    "NOT_MODIFIED",
    "REVALIDATE",
    "cached",
    "etag_of",
]

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

#: The headers a cacheable GET declares in the spec.
CACHE_HEADERS = [
    ResponseHeader(
        name="ETag",
        description="The representation's entity tag: send it back as If-None-Match.",
        documentation_only=True,
    ),
    ResponseHeader(
        name="Cache-Control",
        description=f"`{IMMUTABLE}` for an entry (it never changes); `{REVALIDATE}` else.",
        documentation_only=True,
    ),
]
#: The answer to a request whose If-None-Match names the current entity tag.
NOT_MODIFIED = {
    304: ResponseSpec(data_container=None, description="Not modified: the cached copy is current.")
}


def etag_of(body: bytes) -> str:
    """A strong entity tag of these bytes."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def cached(
    request: Request[Any, Any, Any],
    body: bytes,
    media_type: str,
    *,
    etag: str | None = None,
    immutable: bool = False,
) -> Response[Any]:
    """``body`` with its entity tag and cache policy, or 304 if the client holds it."""
    tag = etag or etag_of(body)
    headers = {"ETag": tag, "Cache-Control": IMMUTABLE if immutable else REVALIDATE}
    if _matches(request.headers.get("if-none-match"), tag):
        return Response(b"", status_code=304, headers=headers, media_type=media_type)
    return Response(body, headers=headers, media_type=media_type)


def _matches(header: str | None, tag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    wanted = tag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == wanted for part in header.split(","))
