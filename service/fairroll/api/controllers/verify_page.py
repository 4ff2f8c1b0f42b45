"""``GET /verify``: a page where anyone checks a roll's answer, receipt or entry, or a
table's export, against a root key id, in words (``fairroll.page.verify_page``); and
``GET /verify/offline.html``, the same page as one self-contained file to keep and open
from disk."""

from __future__ import annotations

from typing import Any

from litestar import Controller, MediaType, Request, Response, get

from fairroll.api.caching import cached
from fairroll.page.verify_page import offline_page, served_page

__all__ = ["VerifyPageController"]


class VerifyPageController(Controller):
    path = "/verify"
    include_in_schema = False

    @get("/", media_type=MediaType.HTML)
    async def page(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        return cached(request, served_page().encode(), MediaType.HTML)

    @get("/offline.html", media_type=MediaType.HTML)
    async def offline(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        public: str | None = getattr(request.app.state, "public_url", None)
        server = public or str(request.base_url).rstrip("/")
        response: Response[bytes] = cached(request, offline_page(server).encode(), MediaType.HTML)
        response.headers["Content-Disposition"] = 'attachment; filename="fairroll-verify.html"'
        return response
