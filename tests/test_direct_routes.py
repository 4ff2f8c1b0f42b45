"""The roll routes answered directly (``api.direct``) answer as Litestar's routing does.

Litestar routes ``/v1/fbc/rolls/`` (a trailing slash) to the same handler, and the direct
routes leave it to Litestar (only the path as declared is answered directly); so each
request below is sent both ways to one live server, and the two answers must be the
same: status, media type, headers, and the body (the path it names aside).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar, Request, Response, post
from litestar.exceptions import HTTPException
from litestar.handlers import HTTPRouteHandler

from fairroll.api.app import create_app
from fairroll.api.direct import _HOST, DIRECT, DirectRoutes, _handler_of
from fairroll.api.settings import Settings
from fairroll.api.strict import strict_body
from fairroll.redis_server import free_port
from support import TEST_SIGNING_KEY

HERE = Path(__file__).resolve().parent

FBC = {"pool": 5, "risk": 2}
GOOD = {**FBC, "dice": {"risk": [5, 2]}}
#: Building an app warns of what Litestar 3 will drop (a ``data`` kwarg without a body
#: marker, ``Parameter(query=...)``), as the server's own routes do.
LITESTAR_3_WARNINGS = pytest.mark.filterwarnings("ignore::DeprecationWarning")
#: Headers that differ between any two answers (or with the body's length), and the
#: server's own framing (granian closes a connection whose body was left unread).
VARYING = {"date", "content-length", "ratelimit", "server", "connection"}

JSON = {"content-type": "application/json"}
TEXT = {"content-type": "text/plain"}
#: The server answers 413 before reading the body and may close the connection with the
#: rest unread: the next request must not be sent on that connection.
ONCE = {**JSON, "connection": "close"}
TWICE = b'{"pool": 5, "risk": 2, "pool": 6}'
TWO_D6 = {"formula": "2d6+1", "dice": {"d6": [2, 5]}}
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("a roll of supplied dice", "/v1/fbc/rolls", {"json": GOOD}),
    ("a roll of a formula's supplied dice", "/v1/dice/rolls", {"json": TWO_D6}),
    ("a roll with an integral float", "/v1/fbc/rolls", {"json": {**GOOD, "pool": 5.0}}),
    ("a field out of its bounds", "/v1/fbc/rolls", {"json": {**FBC, "pool": 0}}),
    ("an unknown field", "/v1/fbc/rolls", {"json": {**FBC, "bogus": 1}}),
    ("a field missing", "/v1/fbc/rolls", {"json": {"risk": 2}}),
    ("a number of the wrong type", "/v1/fbc/rolls", {"json": {**FBC, "pool": "5"}}),
    ("a broken rule", "/v1/fbc/rolls", {"json": {**FBC, "faster": 1, "slower": 1}}),
    ("a formula that is no formula", "/v1/dice/rolls", {"json": {"formula": "2d6*"}}),
    ("supplied dice that do not fit", "/v1/fbc/rolls", {"json": {**FBC, "dice": {"risk": [9]}}}),
    ("not JSON", "/v1/fbc/rolls", {"content": b'{"pool": 5,', "headers": JSON}),
    ("a key twice", "/v1/fbc/rolls", {"content": TWICE, "headers": JSON}),
    ("JSON sent as text", "/v1/fbc/rolls", {"content": json.dumps(FBC), "headers": TEXT}),
    ("a body too large", "/v1/fbc/rolls", {"content": b" " * 70_000 + b"{}", "headers": ONCE}),
    ("no body", "/v1/fbc/rolls", {"headers": JSON}),
]  # fmt: skip


def comparable(answer: httpx.Response, path: str) -> dict[str, Any]:
    """What must be the same both ways: the receipt and seed of a roll name its own
    entry, and a problem names the path it was sent to."""
    text = answer.text.replace(path + "/", path)
    body: Any = (
        json.loads(text) if answer.headers.get("content-type", "").endswith("json") else text
    )
    if isinstance(body, dict) and "receipt" in body:
        body = {k: v for k, v in body.items() if k not in {"receipt", "seed"}}
    headers = {k: v for k, v in answer.headers.items() if k not in VARYING}
    return {"status": answer.status_code, "headers": headers, "body": body}


@pytest.mark.parametrize(("case", "path", "request_"), CASES, ids=[c[0] for c in CASES])
def test_each_request_is_answered_as_litestar_answers_it(
    client: httpx.Client, table: str, case: str, path: str, request_: dict[str, Any]
) -> None:
    if "json" in request_:
        request_ = {**request_, "json": {**request_["json"], "table": table}}
    direct = client.post(path, **request_)
    routed = client.post(path + "/", **request_)
    assert comparable(direct, path) == comparable(routed, path), case
    assert (direct.status_code == 200) is case.startswith("a roll")


def test_a_keyed_table_and_a_repeated_roll_are_answered_alike(client: httpx.Client) -> None:
    made = client.post("/v1/tables", json={}).json()
    table, key = made["table"], made["write_key"]
    body = {**GOOD, "table": table}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        direct = client.post("/v1/fbc/rolls", json=body, headers=headers)
        routed = client.post("/v1/fbc/rolls/", json=body, headers=headers)
        assert direct.status_code in (401, 403)
        assert comparable(direct, "/v1/fbc/rolls") == comparable(routed, "/v1/fbc/rolls")
    # The same Idempotency-Key both ways: the second answer is the first roll again.
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": uuid.uuid4().hex}
    first = client.post("/v1/fbc/rolls", json=body, headers=headers)
    again = client.post("/v1/fbc/rolls/", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    other = client.post("/v1/fbc/rolls", json={**body, "pool": 6}, headers=headers)
    other_routed = client.post("/v1/fbc/rolls/", json={**body, "pool": 6}, headers=headers)
    assert other.status_code == 409
    assert comparable(other, "/v1/fbc/rolls") == comparable(other_routed, "/v1/fbc/rolls")


def scope(path: str, headers: list[tuple[bytes, bytes]], **extra: Any) -> dict[str, Any]:
    return {"type": "http", "method": "POST", "path": path, "headers": headers, **extra}


@LITESTAR_3_WARNINGS
@pytest.mark.parametrize("cors", [False, True])
def test_only_a_declared_roll_route_as_written_is_answered_directly(cors: bool) -> None:
    env = {
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "FAIRROLL_COMPUTE_WORKERS": "0",
        "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY,
    }
    if cors:
        env["FAIRROLL_CORS_ORIGINS"] = "https://vtt.example"
    direct = create_app(Settings.from_env(env)).direct  # type: ignore[attr-defined]
    host = [(b"host", b"127.0.0.1:8000")]
    for path in ("/v1/fbc/rolls", "/v1/tft/contests", "/v1/dice/rolls"):
        assert direct.of(scope(path, host)) is not None
    assert direct.of(scope("/v1/fbc/rolls/", host)) is None  # Litestar normalizes it
    assert direct.of(scope("/v1/fbc/rolls/odds", host)) is None  # a calculation: the pool
    assert direct.of(scope("/v1/tables", host)) is None
    assert direct.of({**scope("/v1/fbc/rolls", host), "method": "GET"}) is None
    assert direct.of(scope("/v1/fbc/rolls", host, root_path="/api")) is None
    assert direct.of(scope("/v1/fbc/rolls", [(b"host", b"bad host/")])) is None
    origin = [*host, (b"origin", b"https://vtt.example")]
    # A CORS request's headers are written by Litestar's CORS layer.
    assert (direct.of(scope("/v1/fbc/rolls", origin)) is None) is cors


def _guard(connection: Any, handler: Any) -> None:
    """A guard: a direct route does not run guards, so it must refuse the handler."""


@LITESTAR_3_WARNINGS
@pytest.mark.parametrize(
    ("declared", "why"),
    [
        ({"guards": [_guard]}, "guards"),
        ({"http_method": "PUT"}, "a method other than POST"),
        ({"response_headers": {"X-Extra": "1"}}, "response headers or cookies"),
        ({"after_response": lambda request: None}, "an after_response hook"),
    ],
)
def test_a_handler_that_needs_more_of_litestar_is_refused(
    declared: dict[str, Any], why: str
) -> None:
    async def answer(data: dict[str, int], request: Request[Any, Any, Any]) -> bytes:
        return b"{}"

    route = HTTPRouteHandler("/direct", **{"http_method": "POST", **declared}, opt={DIRECT: True})
    app = Litestar([route(answer)], before_request=strict_body)
    with pytest.raises(ValueError, match=why):
        DirectRoutes(app)


@LITESTAR_3_WARNINGS
def test_a_handler_of_other_parameters_is_refused() -> None:
    async def answer(data: dict[str, int], table: str) -> bytes:
        return b"{}"

    app = Litestar([post("/direct", opt={DIRECT: True})(answer)], before_request=strict_body)
    with pytest.raises(ValueError, match=r"parameters other than \(data, request\)"):
        DirectRoutes(app)


def test_a_live_roll_is_answered_by_the_direct_route(
    redis_server: Any, tmp_path: Path, table: str
) -> None:
    """Over real HTTP, a roll to its route as declared is answered directly (the spy app
    marks it), one with a trailing slash by Litestar, and both are the same roll."""
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_server.url,
        "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY,
        "FAIRROLL_COMPUTE_WORKERS": "0",
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "uvicorn", "--factory", "direct_spy:create_app"]
    command += ["--port", str(port), "--log-level", "warning"]
    with (tmp_path / "spy.log").open("wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{url}/livez", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise
                time.sleep(0.05)
            body = {**GOOD, "table": table}
            direct = httpx.post(f"{url}/v1/fbc/rolls", json=body, timeout=10)
            routed = httpx.post(f"{url}/v1/fbc/rolls/", json=body, timeout=10)
            refused = httpx.post(f"{url}/v1/fbc/rolls", json={"risk": 2}, timeout=10)
        finally:
            server.terminate()
            server.wait(15)
    assert direct.status_code == routed.status_code == 200
    assert direct.headers.get("x-answered") == "direct"
    assert "x-answered" not in routed.headers
    assert (refused.status_code, refused.headers.get("x-answered")) == (422, "direct")
    assert comparable(direct, "/v1/fbc/rolls") == {
        **comparable(routed, "/v1/fbc/rolls"),
        "headers": {**comparable(routed, "/v1/fbc/rolls")["headers"], "x-answered": "direct"},
    }


@LITESTAR_3_WARNINGS
def test_a_status_code_handler_answers_as_litestar_picks_it() -> None:
    """Litestar's exception layer prefers a handler keyed by an HTTP error's status code
    to one keyed by its class; the direct route picks the same one."""

    def by_status(request: Request[Any, Any, Any], exc: Exception) -> Any:
        return Response({"by": "status"}, status_code=415)

    def by_class(request: Request[Any, Any, Any], exc: Exception) -> Any:
        return Response({"by": "class"}, status_code=400)

    handlers = {415: by_status, HTTPException: by_class, ValueError: by_class}
    assert _handler_of(handlers, HTTPException(status_code=415)) is by_status
    assert _handler_of(handlers, HTTPException(status_code=404)) is by_class
    assert _handler_of({500: by_status, HTTPException: by_class}, KeyError()) is by_status
    with pytest.raises(KeyError):  # no handler of its own: it goes on up, as in Litestar
        _handler_of(handlers, KeyError("x"))


@given(st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
def test_the_host_check_is_the_routers_own(host: bytes) -> None:
    """The direct routes refuse a host header where Litestar's router would; its check is
    private (``litestar._asgi.utils``), so this test fails when it moves or changes."""
    from litestar._asgi.utils import is_valid_host  # noqa: PLC0415 - pinned here only

    assert (_HOST.match(host) is not None) is is_valid_host(host)
