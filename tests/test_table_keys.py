"""Tables with write keys: strangers cannot roll on them; the default table stays open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def new_table(client: httpx.Client) -> tuple[str, str]:
    response = client.post("/v1/tables")
    assert response.status_code == 201, response.text
    body = response.json()
    return body["table"], body["write_key"]


def test_keyed_table_needs_its_key(client: httpx.Client) -> None:
    table, key = new_table(client)
    assert len(table) >= 20  # unguessable: 128 random bits
    missing = client.post("/v1/tft/contests", json={**BODY, "table": table})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert missing.headers["content-type"].startswith("application/problem+json")
    wrong = client.post(
        "/v1/tft/contests",
        json={**BODY, "table": table},
        headers={"Authorization": "Bearer frk_not-the-key"},
    )
    assert wrong.status_code == 403
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0  # nothing appended
    right = client.post(
        "/v1/tft/contests",
        json={**BODY, "table": table},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert right.status_code == 200, right.text
    assert right.json()["receipt"]["table"] == table
    # Reading needs only the (unguessable) id.
    assert client.get(f"/v1/tables/{table}/entries/1").status_code == 200


def test_each_table_has_its_own_key(client: httpx.Client) -> None:
    first, first_key = new_table(client)
    second, _ = new_table(client)
    assert first != second
    response = client.post(
        "/v1/tft/contests",
        json={**BODY, "table": second},
        headers={"Authorization": f"Bearer {first_key}"},
    )
    assert response.status_code == 403


def test_open_tables_need_no_key(client: httpx.Client, table: str) -> None:
    assert client.post("/v1/tft/contests", json={**BODY, "table": table}).status_code == 200
    assert client.post("/v1/tft/contests", json=BODY).status_code == 200  # default


@pytest.fixture
def closed_default(tmp_path: Path) -> Iterator[LiveServer]:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(
        redis.url, tmp_path / "server.log", env={"FAIRROLL_DEFAULT_TABLE_OPEN": "false"}
    )
    yield server
    server.stop()
    redis.stop()


def test_operator_can_close_the_default_table(closed_default: LiveServer) -> None:
    with httpx.Client(base_url=closed_default.url) as client:
        response = client.post("/v1/tft/contests", json=BODY)
        assert response.status_code == 403
        assert "closed" in response.json()["detail"]
        assert client.post("/v1/tft/contests", json={**BODY, "table": "other"}).status_code == 200
