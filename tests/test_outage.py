"""Redis going away: no roll is answered that was not recorded, and the chain survives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}, "table": "outage"}


@pytest.fixture
def own_stack(tmp_path: Path) -> Iterator[tuple[RedisServer, LiveServer]]:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(redis.url, tmp_path / "server.log")
    yield redis, server
    server.stop()
    redis.stop()


def test_redis_down_is_503_and_the_chain_continues_after_it_returns(
    own_stack: tuple[RedisServer, LiveServer],
) -> None:
    redis, server = own_stack
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert [client.post("/v1/tft/contests", json=BODY).status_code for _ in range(2)] == [
            200,
            200,
        ]
        redis.stop()

        down = client.post("/v1/tft/contests", json=BODY)
        assert down.status_code == 503
        assert down.headers["content-type"].startswith("application/problem+json")
        assert down.headers["retry-after"] == "1"
        assert "receipt" not in down.json()
        assert client.get("/readyz").status_code == 503
        assert client.get("/v1/tables/outage/entries").status_code == 503
        assert client.get("/v1/tables/outage/export").status_code == 503
        assert client.get("/livez").status_code == 200

        redis.start()  # same port, same AOF data
        assert client.get("/readyz").status_code == 200
        back = client.post("/v1/tft/contests", json=BODY)
        assert back.status_code == 200, back.text
        assert back.json()["receipt"]["seq"] == 3  # no gap, no half-written entry
        report = client.get("/v1/tables/outage/verification").json()
        assert report["ok"] is True, report
        assert report["entries"] == 3
