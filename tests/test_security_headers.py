"""Security headers on every response, whatever its route or status."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from fairroll.api.headers import security_headers
from fairroll.redis_server import RedisServer
from support import LiveServer


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/livez"),
        ("GET", "/tables/default"),
        ("GET", "/static/table.js"),
        ("GET", "/v1/no-such-thing"),  # a 404 from the router
        ("DELETE", "/v1/keys"),  # a 405
        ("POST", "/v1/tft/contests"),  # a 415 (no body)
        ("HEAD", "/v1/keys"),
        ("POST", "/v1/tft/contests/odds"),  # answered by a compute worker, relayed
    ],
)
def test_every_response_carries_the_security_headers(
    client: httpx.Client, method: str, path: str
) -> None:
    body = {"a": {"attribute": 12}, "b": {"attribute": 12}} if path.endswith("/odds") else None
    answer = client.request(method, path, json=body)
    # Each header once (a relayed answer must not carry the worker's copy too).
    for name in ("content-security-policy", "x-content-type-options", "referrer-policy"):
        assert len(answer.headers.get_list(name)) == 1, name
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert "frame-ancestors 'none'" in policy
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-frame-options"] == "DENY"


def test_the_docs_page_allows_only_redocs_inline_styles(client: httpx.Client) -> None:
    policy = client.get("/schema").headers["content-security-policy"]
    assert "script-src 'self';" in policy  # no inline script, no CDN
    assert "style-src 'self' 'unsafe-inline'" in policy


def test_a_vtt_may_be_allowed_to_frame_the_pages(redis_server: RedisServer, tmp_path: Path) -> None:
    server = LiveServer(
        redis_server.url,
        tmp_path / "server.log",
        env={"FAIRROLL_FRAME_ANCESTORS": "'self' https://*.forge-vtt.com"},
    )
    try:
        answer = httpx.get(f"{server.url}/tables/default")
        assert (
            "frame-ancestors 'self' https://*.forge-vtt.com"
            in answer.headers["content-security-policy"]
        )
        assert "x-frame-options" not in answer.headers  # it could only say DENY or SAMEORIGIN
    finally:
        server.stop()


def test_a_tile_mirror_may_be_allowed_for_the_page_to_read(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The table page verifies a log from a mirror's tiles only where its content policy
    lets it connect: the operator names the mirrors; nothing else is opened."""
    server = LiveServer(
        redis_server.url,
        tmp_path / "server.log",
        env={"FAIRROLL_MIRROR_ORIGINS": "https://logs.example"},
    )
    try:
        policy = httpx.get(f"{server.url}/tables/default").headers["content-security-policy"]
        assert "connect-src 'self' https://logs.example;" in policy
        assert "script-src 'self';" in policy
    finally:
        server.stop()


def test_a_mirror_origin_that_is_not_a_source_list_is_refused() -> None:
    with pytest.raises(ValueError, match="FAIRROLL_MIRROR_ORIGINS"):
        security_headers("'none'", "https://x.example; script-src *")
