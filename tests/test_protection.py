"""Rate limits, client identity behind proxies, and CORS for browser VTT plugins."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

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
        # A plugin's event stream resumes from its own origin with Last-Event-ID.
        resume = client.options(
            "/v1/tables/default/events",
            headers={
                "Origin": "https://foundry.example",
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "last-event-id",
            },
        )
        assert resume.status_code in (200, 204)
        assert "last-event-id" in resume.headers["access-control-allow-headers"].lower()


def test_no_cors_and_no_limit_by_default(client: httpx.Client) -> None:
    response = client.post(
        "/v1/tft/contests/odds", json=BODY, headers={"Origin": "https://foundry.example"}
    )
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[tuple[LiveServer, RedisServer]]:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(
        redis.url,
        tmp_path / "server.log",
        env={
            "FAIRROLL_RATE_LIMIT": "20",
            "FAIRROLL_TRUSTED_PROXY_HOPS": "1",
            "FAIRROLL_REQUIRE_TABLES": "true",
        },
    )
    yield server, redis
    server.stop()
    redis.stop()


def from_(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def test_no_burst_passes_more_than_the_bucket(limited: tuple[LiveServer, RedisServer]) -> None:
    """A fixed window let 40 through in 2 s at a limit of 20: a bucket of 20 lets 20 (and
    what refills meanwhile, 20 a minute: at most one more in these few seconds)."""
    server, _ = limited
    with httpx.Client(base_url=server.url) as client:
        started = time.monotonic()
        codes = [
            client.post("/v1/tft/contests", json=BODY, headers=from_("203.0.113.1")).status_code
            for _ in range(40)
        ]
        refilled = (time.monotonic() - started) * 20 / 60  # tokens that came back meanwhile
    assert codes[:20] == [200] * 20
    assert 20 <= codes.count(200) <= 20 + int(refilled) + 1


def test_costly_requests_take_more_of_the_bucket(limited: tuple[LiveServer, RedisServer]) -> None:
    server, _ = limited
    with httpx.Client(base_url=server.url) as client:
        odds = [
            client.post("/v1/tft/contests/odds", json=BODY, headers=from_("203.0.113.2"))
            for _ in range(6)
        ]
        assert [o.status_code for o in odds] == [200] * 5 + [429]  # 5 x 4 = 20 tokens
        assert "costs 4" in odds[-1].json()["detail"]
        # The heavy reads are covered too: a verification costs 10, an export 5.
        verifications = [
            client.get("/v1/tables/default/verification", headers=from_("203.0.113.3"))
            for _ in range(3)
        ]
        assert [v.status_code for v in verifications] == [200, 200, 429]
        exports = [
            client.get("/v1/tables/default/export", headers=from_("203.0.113.4")).status_code
            for _ in range(5)
        ]
        assert exports == [200] * 4 + [429]
        # Probes and the page are free.
        for _ in range(30):
            assert client.get("/livez", headers=from_("203.0.113.4")).status_code == 200


def test_a_write_key_has_its_own_bucket_across_addresses(
    limited: tuple[LiveServer, RedisServer],
) -> None:
    """A leaked key used from many addresses is limited as one client."""
    server, _ = limited
    with httpx.Client(base_url=server.url) as client:
        made = client.post("/v1/tables", headers=from_("198.51.100.1")).json()
        auth = {"Authorization": f"Bearer {made['write_key']}"}
        body = {**BODY, "table": made["table"]}
        codes = [
            client.post(
                "/v1/tft/contests", json=body, headers={**auth, **from_(f"198.51.100.{2 + n}")}
            ).status_code
            for n in range(22)
        ]
    assert codes.count(200) <= 20
    assert codes[-1] == 429


def test_required_tables_stay_closed_after_their_records_are_lost(
    limited: tuple[LiveServer, RedisServer], tmp_path: Path
) -> None:
    """With FAIRROLL_REQUIRE_TABLES, a table nobody created is refused; after a FLUSHALL a
    keyed table is refused too (404), never open to a roll without its key."""
    server, redis = limited
    with httpx.Client(base_url=server.url) as client:
        unknown = client.post("/v1/tft/contests", json={**BODY, "table": "never-made"})
        assert unknown.status_code == 404
        assert "never created" in unknown.json()["detail"]
        made = client.post("/v1/tables", headers=from_("192.0.2.1")).json()
        keyless = client.post("/v1/tft/contests", json={**BODY, "table": made["table"]})
        assert keyless.status_code == 401
    Redis.from_url(redis.url).flushall()
    # A fresh process (nothing cached) after the loss: the table is unknown, so refused.
    fresh = LiveServer(redis.url, tmp_path / "fresh.log", env={"FAIRROLL_REQUIRE_TABLES": "true"})
    try:
        with httpx.Client(base_url=fresh.url) as client:
            after = client.post("/v1/tft/contests", json={**BODY, "table": made["table"]})
            assert after.status_code == 404
    finally:
        fresh.stop()


def test_limited_answers_say_the_quota_as_the_ietf_ratelimit_fields(guarded: LiveServer) -> None:
    """draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy names the bucket (q tokens a
    w = 60 s window), RateLimit what is left (r) and when it is whole again (t seconds)."""
    with httpx.Client(base_url=guarded.url) as client:
        headers = {"X-Forwarded-For": "192.0.2.44", "Origin": "https://foundry.example"}
        seen = [client.post("/v1/tft/contests", json=BODY, headers=headers) for _ in range(6)]
        assert [r.status_code for r in seen] == [200] * 5 + [429]
        for answer in seen:
            assert answer.headers["ratelimit-policy"] == '"fairroll";q=5;w=60'
        left = [
            int(re.fullmatch(r'"fairroll";r=(\d+);t=(\d+)', r.headers["ratelimit"])[1])  # type: ignore[index]
            for r in seen
        ]
        assert left == [4, 3, 2, 1, 0, 0]
        refused = seen[-1].headers["ratelimit"]
        assert refused.endswith(f";t={seen[-1].headers['retry-after']}")
        # A browser plugin may read them, and the entity tags (CORS exposes them).
        exposed = seen[0].headers["access-control-expose-headers"].lower()
        for name in ("etag", "ratelimit", "ratelimit-policy", "retry-after"):
            assert name in exposed
        # What costs nothing carries no quota fields.
        assert "ratelimit" not in client.get("/v1/systems").headers
