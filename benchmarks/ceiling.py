"""The ceilings: a bare Litestar app answering a fixed small JSON body.

Served by ``fairroll.cli.run_server`` exactly as fairroll is (granian, one worker,
uvloop, no access log), so the harness compares fairroll with its own stack doing
nothing. ``/ceiling`` does not read the request body; ``/ceiling/body`` reads and
decodes it (a roll must), the like-for-like baseline of issue 20's targets.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, post, route

BODY = {"ok": True, "service": "ceiling"}


@route("/ceiling", http_method=["GET", "POST"], status_code=200)
async def ceiling() -> dict[str, object]:
    return BODY


@post("/ceiling/body", status_code=200)
async def ceiling_body(data: dict[str, Any]) -> dict[str, object]:
    return BODY


def create_app() -> Litestar:
    return Litestar([ceiling, ceiling_body], openapi_config=None)
