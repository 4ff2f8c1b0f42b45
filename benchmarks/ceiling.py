"""The ceiling: a bare Litestar app answering a fixed small JSON body.

Served by ``fairroll.cli.run_server`` exactly as fairroll is (granian, one worker,
uvloop, no access log), so the harness compares fairroll with its own stack doing
nothing. It does not read the request body (there is nothing to do with it).
"""

from __future__ import annotations

from litestar import Litestar, route

BODY = {"ok": True, "service": "ceiling"}


@route("/ceiling", http_method=["GET", "POST"], status_code=200)
async def ceiling() -> dict[str, object]:
    return BODY


def create_app() -> Litestar:
    return Litestar([ceiling], openapi_config=None)
