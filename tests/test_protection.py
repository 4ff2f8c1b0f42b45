"""Rate limits, client identity behind proxies, and CORS for browser VTT plugins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import LiveServer
from fairroll.redis_server import RedisServer, free_port

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[LiveServer]:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(
        redis.url,
        tmp_path / "server.log",
        env={
            "FAIRROLL_RATE_LIMIT": "5",
            "FAIRROLL_TRUSTED_PROXY_HOPS": "1",
            "FAIRROLL_CORS_ORIGINS": "https://foundry.example,https://owlbear.example",
        },
    )
    yield server
    server.stop()
    redis.stop()


def test_rate_limit_answers_429_with_retry_after(guarded: LiveServer) -> None:
    with httpx.Client(base_url=guarded.url) as client:
        headers = {"X-Forwarded-For": "203.0.113.7"}
        codes = [
            client.post("/v1/tft/contests", json=BODY, headers=headers).status_code
            for _ in range(7)
        ]
        assert codes == [200] * 5 + [429] * 2
        limited = client.post("/v1/tft/contests/odds", json=BODY, headers=headers)
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["retry-after"]) <= 61
        assert limited.headers["content-type"].startswith("application/problem+json")
        # Another client (behind the same trusted proxy) has its own budget; reads are free.
        other = {"X-Forwarded-For": "198.51.100.9"}
        assert client.post("/v1/tft/contests", json=BODY, headers=other).status_code == 200
        assert client.get("/v1/tables/default/entries").status_code == 200
        # Only the nearest trusted hop counts: a spoofed left-most address changes nothing.
        spoof = {"X-Forwarded-For": "10.9.9.9, 203.0.113.7"}
        assert client.post("/v1/tft/contests", json=BODY, headers=spoof).status_code == 429


def test_cors_preflight_allows_configured_origins_only(guarded: LiveServer) -> None:
    with httpx.Client(base_url=guarded.url) as client:
        preflight = {
            "Origin": "https://foundry.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, idempotency-key",
        }
        allowed = client.options("/v1/tft/contests", headers=preflight)
        assert allowed.status_code in (200, 204)
        assert allowed.headers["access-control-allow-origin"] == "https://foundry.example"
        assert "idempotency-key" in allowed.headers["access-control-allow-headers"].lower()
        denied = client.options(
            "/v1/tft/contests", headers={**preflight, "Origin": "https://evil.example"}
        )
        assert "access-control-allow-origin" not in denied.headers


def test_no_cors_and_no_limit_by_default(client: httpx.Client) -> None:
    response = client.post(
        "/v1/tft/contests/odds", json=BODY, headers={"Origin": "https://foundry.example"}
    )
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers
