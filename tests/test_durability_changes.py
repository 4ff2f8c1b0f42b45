"""No roll is acknowledged on a Redis that is no longer durable, with no ``/readyz`` call
to notice it: each round re-checks what its durability rests on, in the same round trip.

Redis is restarted under load, on the same port and data, with ``appendfsync everysec``
and then with ``appendonly no``; every answer is timed. Not one roll answered 200 from
the moment the durable Redis stopped until a durable one was back; once it is (set at
run time, or restarted durable), rolls are answered again within a second.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"pool": 6, "risk": 2}


class Load:
    """Rolls in a loop on a few threads, each answer's status and the time it came."""

    def __init__(self, url: str, lanes: int = 4) -> None:
        self.url = url
        #: (sent, answered, status) of every roll.
        self.answers: list[tuple[float, float, int]] = []
        self.running = True
        self.threads = [threading.Thread(target=self.lane, args=(i,)) for i in range(lanes)]
        for thread in self.threads:
            thread.start()

    def lane(self, i: int) -> None:
        with httpx.Client(base_url=self.url, timeout=5) as http:
            while self.running:
                sent = time.monotonic()
                try:
                    status = http.post(
                        "/v1/fbc/rolls", json={**BODY, "table": f"d-{i}"}
                    ).status_code
                except httpx.HTTPError:
                    status = 0
                self.answers.append((sent, time.monotonic(), status))

    def stop(self) -> None:
        self.running = False
        for thread in self.threads:
            thread.join(10)

    def acked(self, start: float, end: float) -> int:
        """Rolls sent after ``start`` (so never to the Redis before it) and answered 200
        before ``end``."""
        return sum(
            1 for sent, at, status in self.answers if sent >= start and at <= end and status == 200
        )

    def first_ack_after(self, start: float) -> float | None:
        later = (at - start for _, at, status in self.answers if at >= start and status == 200)
        return next(later, None)


@pytest.fixture
def redis_and_server(tmp_path: Path) -> Iterator[tuple[list[RedisServer], LiveServer]]:
    port = free_port()
    redis = [RedisServer(tmp_path / "redis", port=port).start()]
    server = LiveServer(redis[0].url, tmp_path / "fairroll.log")
    yield redis, server
    server.stop()
    redis[-1].stop()


def restart(redis: list[RedisServer], **settings: str) -> float:
    """Stop Redis and start it again on the same port and data; when the old one was
    gone (rolls answered before were the durable Redis's)."""
    old = redis[-1]
    old.stop()
    down = time.monotonic()
    redis.append(RedisServer(old.data_dir, port=old.port, **settings).start())
    return down


def test_no_roll_is_acknowledged_on_a_redis_restarted_without_durability(
    redis_and_server: tuple[list[RedisServer], LiveServer],
) -> None:
    redis, server = redis_and_server
    load = Load(server.url)
    try:
        time.sleep(1.0)
        assert load.acked(0, time.monotonic()) > 20  # it rolls
        # Restarted with everysec: not durable on this Redis (no WAITAOF before 7.2).
        down = restart(redis, appendfsync="everysec")
        time.sleep(2.0)
        fixed = time.monotonic()
        with Redis.from_url(redis[-1].url) as client:
            client.config_set("appendfsync", "always")  # durable again, at run time
        time.sleep(1.5)
        assert load.acked(down, fixed) == 0, load.answers[-50:]
        resumed = load.first_ack_after(fixed)
        assert resumed is not None and resumed < 1.0, resumed
        # Restarted with no AOF at all; then restarted durable.
        down = restart(redis, appendonly="no")
        time.sleep(2.0)
        back = restart(redis)
        durable = time.monotonic()
        time.sleep(1.5)
        assert load.acked(down, back) == 0, load.answers[-50:]
        resumed = load.first_ack_after(durable)
        assert resumed is not None and resumed < 1.0, resumed
    finally:
        load.stop()
    refused = sum(1 for _, _, status in load.answers if status == 503)
    assert refused > 0  # the rolls in the gaps were refused, not lost in silence


def test_a_redis_that_is_not_durable_is_refused_in_words_that_say_so(
    redis_and_server: tuple[list[RedisServer], LiveServer],
) -> None:
    """Redis answers but keeps no AOF: the roll's 503 says what is wrong and that a retry
    cannot help, not that Redis did not answer."""
    redis, server = redis_and_server
    restart(redis, appendonly="no")
    problem: dict[str, object] = {}
    deadline = time.monotonic() + 10
    with httpx.Client(base_url=server.url, timeout=5) as http:
        while time.monotonic() < deadline:
            answer = http.post("/v1/dice/rolls", json={"table": "durable", "formula": "1d6"})
            assert answer.status_code == 503, answer.text
            problem = answer.json()
            if str(problem["type"]).endswith(":audit-store-not-durable"):
                assert answer.headers["Retry-After"] == "30"
                break
            time.sleep(0.1)
    assert str(problem["type"]).endswith(":audit-store-not-durable"), problem
    assert "appendonly" in str(problem["detail"]) and "retry cannot help" in str(problem["detail"])
    assert "did not answer" not in str(problem["detail"])
