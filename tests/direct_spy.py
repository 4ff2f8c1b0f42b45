"""An app factory for one test: fairroll's own app, whose direct routes mark what they
answer (``x-answered: direct``), so a live server shows which path answered a request.
Only ``test_direct_routes`` serves it; nothing else of the app changes."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.types import Message, Receive, Scope, Send

from fairroll.api.app import create_app_from_env
from fairroll.api.direct import DirectRoutes

MARK = (b"x-answered", b"direct")


class _Marked:
    def __init__(self, inner: DirectRoutes) -> None:
        self.inner = inner

    def of(self, scope: Scope) -> Any:
        return self.inner.of(scope)

    async def __call__(self, found: Any, scope: Scope, receive: Receive, send: Send) -> None:
        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), MARK]}
            await send(message)

        await self.inner(found, scope, receive, marked)


def create_app() -> Litestar:
    app = create_app_from_env()
    assert app.direct is not None  # type: ignore[attr-defined]
    app.direct = _Marked(app.direct)  # type: ignore[attr-defined]
    return app
