"""Security headers on every response, and the API docs page without a CDN.

Every response carries a strict Content-Security-Policy (the table page and the docs
load only fairroll's own scripts and styles, and have no inline script),
``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``. Who may frame
fairroll's pages is the operator's choice, since VTTs embed table pages in iframes:
``FAIRROLL_FRAME_ANCESTORS`` (a CSP source list, ``'none'`` by default) becomes the
policy's ``frame-ancestors``. A table page verifies a log from its tiles on a mirror only
where ``connect-src`` lets it read: ``FAIRROLL_MIRROR_ORIGINS`` (a CSP source list, none
by default) adds the operator's or the players' mirrors to it.

The docs (``/schema``) are Redoc 2.5.1, served by fairroll from ``/static/vendor`` (MIT,
its licence beside it), started by ``/static/docs.js``. Redoc injects its styles and
runs its search in a ``blob:`` worker, so the docs page alone allows inline styles and
blob workers; scripts stay fairroll's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from litestar import Request
from litestar.openapi.plugins import OpenAPIRenderPlugin

__all__ = ["DocsPage", "security_headers"]

REDOC = "/static/vendor/redoc-2.5.1.standalone.js"
#: A CSP source list: keywords, schemes, hosts with optional wildcards and ports.
_SOURCES = re.compile(r"[A-Za-z0-9'*:/._\- ]{1,500}")

_STRICT = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'"
)
_DOCS = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'"
)


def security_headers(
    frame_ancestors: str, mirror_origins: str = ""
) -> Callable[[str], list[tuple[bytes, bytes]]]:
    """The headers above for a request path (``/schema`` gets the docs policy)."""
    if not _SOURCES.fullmatch(frame_ancestors):
        raise ValueError(f"FAIRROLL_FRAME_ANCESTORS is not a CSP source list: {frame_ancestors!r}")
    if mirror_origins and not _SOURCES.fullmatch(mirror_origins):
        raise ValueError(f"FAIRROLL_MIRROR_ORIGINS is not a CSP source list: {mirror_origins!r}")
    page = _STRICT.replace("connect-src 'self'", f"connect-src 'self' {mirror_origins}".rstrip())
    strict = f"{page}; frame-ancestors {frame_ancestors}".encode()
    docs = f"{_DOCS}; frame-ancestors {frame_ancestors}".encode()
    common = [
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]
    if frame_ancestors.strip() == "'none'":
        common.append((b"x-frame-options", b"DENY"))
    strict_headers = [(b"content-security-policy", strict), *common]
    docs_headers = [(b"content-security-policy", docs), *common]

    def for_path(path: str) -> list[tuple[bytes, bytes]]:
        return docs_headers if path.rstrip("/") == "/schema" else strict_headers

    return for_path


class DocsPage(OpenAPIRenderPlugin):
    """``/schema``: Redoc, from fairroll's own static files, reading ``/schema/openapi.json``."""

    def __init__(self) -> None:
        super().__init__(path="/", favicon="", style="")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        title = openapi_schema.get("info", {}).get("title", "API")
        return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} API</title>
</head>
<body>
<div id="redoc" data-spec-url="/schema/openapi.json"></div>
<script src="{REDOC}"></script>
<script src="/static/docs.js"></script>
</body>
</html>
""".encode()
