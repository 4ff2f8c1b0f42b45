"""Limits on a request's head (``api.limits``): too many or too large headers are a 431,
too long a target a 414, answered before routing (nothing recorded), as RFC 9457
problems with the security headers every answer carries; just under each limit passes."""

from __future__ import annotations

import httpx
import pytest

from fairroll.api.limits import MAX_HEADER_BYTES, MAX_HEADERS, MAX_TARGET_BYTES

ROLL = {"pool": 6, "risk": 2}


def recorded(client: httpx.Client, table: str) -> int:
    return int(client.get(f"/v1/tables/{table}/checkpoint").json()["size"])


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({"x-padding": "a" * 100_000}, "bytes of headers"),
        ({f"x-h{i}": "1" for i in range(MAX_HEADERS + 1)}, "header lines"),
        ({"cookie": "c" * (MAX_HEADER_BYTES + 1)}, "bytes of headers"),
    ],
    ids=["one-100-KB-header", "too-many-lines", "just-over-the-bytes"],
)
def test_too_large_a_head_is_431_and_records_nothing(
    client: httpx.Client, table: str, headers: dict[str, str], says: str
) -> None:
    before = recorded(client, table)
    answer = client.post("/v1/fbc/rolls", json={**ROLL, "table": table}, headers=headers)
    assert answer.status_code == 431, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.headers["x-content-type-options"] == "nosniff"
    problem = answer.json()
    assert problem["type"].endswith("request-header-fields-too-large") and says in problem["detail"]
    assert recorded(client, table) == before


def test_too_long_a_target_is_414(client: httpx.Client, table: str) -> None:
    answer = client.get(f"/v1/tables/{table}/entries", params={"x": "a" * MAX_TARGET_BYTES})
    assert answer.status_code == 414, answer.text
    assert answer.json()["type"].endswith("uri-too-long")


def test_just_under_each_limit_is_served(client: httpx.Client, table: str) -> None:
    # httpx adds its own few lines (host, accept, content-length, ...): leave them room.
    many = {f"x-h{i}": "1" for i in range(MAX_HEADERS - 10)}
    assert client.post("/v1/fbc/rolls", json={**ROLL, "table": table}, headers=many).is_success
    big = {"x-padding": "a" * (MAX_HEADER_BYTES - 1024)}
    assert client.post("/v1/fbc/rolls", json={**ROLL, "table": table}, headers=big).is_success
    long = client.get(f"/v1/tables/{table}/entries", params={"x": "a" * (MAX_TARGET_BYTES - 100)})
    assert long.status_code == 200, long.text
