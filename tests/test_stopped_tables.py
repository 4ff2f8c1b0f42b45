"""A stopped table stays readable, and the server checks its log against the last
checkpoint it signed: its entries, export and verification are served as far as the
log survives, marked stopped; a head moved back is named by every server (even one
that never saw the table); a tail entry deleted under an unchanged head stops the
table at the next roll instead of having it appended after the hole."""

from __future__ import annotations

from pathlib import Path

import httpx
from redis import Redis

from fairroll.audit.keyspace import head_key, log_key
from fairroll.redis_server import RedisServer
from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def roll(client: httpx.Client, table: str) -> httpx.Response:
    return client.post("/v1/tft/contests", json={**BODY, "table": table})


def test_a_stopped_table_is_read_marked_stopped_and_its_moved_head_named(
    client: httpx.Client,
    redis_client: Redis,
    redis_server: RedisServer,
    table: str,
    tmp_path: Path,
) -> None:
    receipts = [roll(client, table).json()["receipt"] for _ in range(5)]
    redis_client.xdel(log_key(table), "4-0", "5-0")
    redis_client.set(head_key(table), f"3:{receipts[2]['entry_hash']}")
    assert roll(client, table).status_code == 503  # stopped
    page = client.get(f"/v1/tables/{table}/entries")
    assert page.status_code == 200 and "stopped" in page.json()["stopped"]
    assert [e["seq"] for e in page.json()["entries"]] == [1, 2, 3]
    export = client.get(f"/v1/tables/{table}/export")
    assert export.status_code == 200 and len(export.content.splitlines()) == 3
    assert "stopped" in export.headers["fairroll-table-stopped"]
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert not report["ok"] and report["first_bad_seq"] == 4, report
    assert "signed a checkpoint of size 5" in report["reason"] and report["stopped"]
    # A server that never saw the table reads the same in Redis: the last signed tree.
    other = LiveServer(redis_server.url, tmp_path / "other.log")
    try:
        fresh = httpx.get(f"{other.url}/v1/tables/{table}/verification", timeout=10).json()
    finally:
        other.stop()
    assert not fresh["ok"] and "its head moved back" in fresh["reason"], fresh


def test_a_tail_deleted_under_its_head_stops_the_table_at_the_next_roll(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    for _ in range(3):
        assert roll(client, table).status_code == 200
    redis_client.xdel(log_key(table), "3-0")  # the head still names seq 3
    refused = roll(client, table)
    assert refused.status_code == 503 and refused.json()["type"].endswith("table-stopped")
    assert redis_client.xlen(log_key(table)) == 2  # nothing appended after the hole
    assert [e["seq"] for e in client.get(f"/v1/tables/{table}/entries").json()["entries"]] == [
        1,
        2,
    ]
