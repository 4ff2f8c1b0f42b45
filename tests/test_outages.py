"""Outages against a real redis-server: Redis down and back, mid-load stops, AOF restarts, a
slow Redis, SIGTERM. No roll is answered that was not recorded, and the chain survives."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[RedisServer, LiveServer]]:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(redis.url, tmp_path / "server.log")
    yield redis, server
    server.stop()
    redis.stop()


def hammer(url: str, table: str, stop: threading.Event) -> list[httpx.Response]:
    """Roll as fast as 4 threads can until ``stop``; every response is kept."""
    results: list[httpx.Response] = []
    lock = threading.Lock()

    def worker() -> None:
        with httpx.Client(base_url=url, timeout=10) as client:
            while not stop.is_set():
                try:
                    response = client.post("/v1/tft/contests", json={**BODY, "table": table})
                except httpx.HTTPError:
                    continue
                with lock:
                    results.append(response)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    return_after = threads
    stop.wait()
    for thread in return_after:
        thread.join()
    return results


def acknowledged(responses: list[httpx.Response]) -> set[int]:
    return {r.json()["receipt"]["seq"] for r in responses if r.status_code == 200}


def test_redis_down_is_503_and_the_chain_continues_after_it_returns(
    stack: tuple[RedisServer, LiveServer],
) -> None:
    redis, server = stack
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert [
            client.post("/v1/tft/contests", json={**BODY, "table": "outage"}).status_code
            for _ in range(2)
        ] == [
            200,
            200,
        ]
        redis.stop()

        down = client.post("/v1/tft/contests", json={**BODY, "table": "outage"})
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
        back = client.post("/v1/tft/contests", json={**BODY, "table": "outage"})
        assert back.status_code == 200, back.text
        assert back.json()["receipt"]["seq"] == 3  # no gap, no half-written entry
        report = client.get("/v1/tables/outage/verification").json()
        assert report["ok"] is True, report
        assert report["entries"] == 3


def test_redis_stopped_mid_load_then_back(stack: tuple[RedisServer, LiveServer]) -> None:
    redis, server = stack
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(hammer, server.url, "load", stop)
        watchdog = threading.Timer(60, stop.set)  # a failed assertion must not hang the run
        watchdog.start()
        time.sleep(1.0)
        redis.stop()  # SIGTERM: Redis flushes its AOF and exits
        time.sleep(1.0)
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/readyz").status_code == 503
            down = client.post("/v1/tft/contests", json={**BODY, "table": "load"})
            assert down.status_code == 503
            assert "audit store" in down.json()["detail"].lower()
        redis.start()
        started = time.monotonic()
        with httpx.Client(base_url=server.url) as client:
            while client.get("/readyz").status_code != 200:
                assert time.monotonic() - started < 10, "did not recover by itself"
                time.sleep(0.1)
        time.sleep(0.5)
        stop.set()
        watchdog.cancel()
        responses = future.result()
    statuses = {r.status_code for r in responses}
    assert statuses <= {200, 503}, statuses
    assert 503 in statuses and 200 in statuses
    with httpx.Client(base_url=server.url) as client:
        report = client.get("/v1/tables/load/verification").json()
        assert report.get("ok") is True, report
        # Every acknowledged roll is in the trail.
        assert acknowledged(responses) <= set(range(1, report["entries"] + 1))


def test_aof_restart_loses_no_acknowledged_entry(stack: tuple[RedisServer, LiveServer]) -> None:
    redis, server = stack
    with httpx.Client(base_url=server.url) as client:
        seqs = {
            client.post("/v1/tft/contests", json={**BODY, "table": "aof"}).json()["receipt"]["seq"]
            for _ in range(20)
        }
        redis.stop()
        redis.start()
        while client.get("/readyz").status_code != 200:
            time.sleep(0.05)
        report = client.get("/v1/tables/aof/verification").json()
    assert report["ok"] is True
    assert report["entries"] == 20 and seqs == set(range(1, 21))


def test_a_slow_redis_times_out_instead_of_hanging(stack: tuple[RedisServer, LiveServer]) -> None:
    redis, server = stack
    blocker = threading.Thread(
        target=lambda: Redis.from_url(redis.url).execute_command("DEBUG", "SLEEP", "3")
    )
    blocker.start()
    time.sleep(0.2)
    started = time.monotonic()
    with httpx.Client(base_url=server.url, timeout=10) as client:
        response = client.post("/v1/tft/contests", json={**BODY, "table": "slow"})
        elapsed = time.monotonic() - started
        assert response.status_code == 503  # FAIRROLL_REDIS_TIMEOUT is 0.5 s in tests
        assert elapsed < 2.5
        assert client.get("/livez").status_code == 200  # the worker is not hung
    blocker.join()
    with httpx.Client(base_url=server.url) as client:
        assert client.post("/v1/tft/contests", json={**BODY, "table": "slow"}).status_code == 200
        assert client.get("/v1/tables/slow/verification").json()["ok"] is True


def test_sigterm_during_load_drops_nothing_acknowledged(
    stack: tuple[RedisServer, LiveServer], tmp_path: Path
) -> None:
    redis, server = stack
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(hammer, server.url, "drain", stop)
        time.sleep(1.0)
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(30) == 0
        stop.set()
        responses = future.result()
    # In-flight requests were answered, not cut: every response is a complete 200.
    assert responses and {r.status_code for r in responses} == {200}
    replacement = LiveServer(redis.url, tmp_path / "again.log")
    try:
        with httpx.Client(base_url=replacement.url) as client:
            report = client.get("/v1/tables/drain/verification").json()
        assert report["ok"] is True
        assert acknowledged(responses) == set(range(1, report["entries"] + 1))
    finally:
        replacement.stop()


def test_a_request_that_cannot_start_its_answer_in_time_is_503(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(
        redis.url,
        tmp_path / "server.log",
        env={"FAIRROLL_REDIS_TIMEOUT": "10", "FAIRROLL_REQUEST_TIMEOUT": "1"},
    )
    try:
        blocker = threading.Thread(
            target=lambda: Redis.from_url(redis.url).execute_command("DEBUG", "SLEEP", "3")
        )
        blocker.start()
        time.sleep(0.2)
        started = time.monotonic()
        with httpx.Client(base_url=server.url, timeout=10) as client:
            response = client.post("/v1/tft/contests", json={**BODY, "table": "stuck"})
            assert response.status_code == 503
            assert response.json()["type"].endswith("timeout")
            assert time.monotonic() - started < 2.5
        blocker.join()
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/v1/tables/stuck/verification").json()["ok"] is True
    finally:
        server.stop()
        redis.stop()
