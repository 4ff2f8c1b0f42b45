"""Safe retries: the same Idempotency-Key and request never rolls twice."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}
ROLLS_EACH = 25


def post(
    client: httpx.Client, table: str, key: str, body: dict[str, object] | None = None
) -> httpx.Response:
    return client.post(
        "/v1/tft/contests",
        json={**(body or BODY), "table": table},
        headers={"Idempotency-Key": key},
    )


def test_a_retry_returns_the_original_roll(client: httpx.Client, table: str) -> None:
    first = post(client, table, "vtt-msg-1")
    retry = post(client, table, "vtt-msg-1")
    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()  # same dice, outcome, seed and receipt
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1
    other = post(client, table, "vtt-msg-2")
    assert other.json()["receipt"]["seq"] == 2


def test_the_same_key_with_another_request_is_a_conflict(client: httpx.Client, table: str) -> None:
    assert post(client, table, "k").status_code == 200
    clash = post(client, table, "k", {"a": {"attribute": 9}, "b": {"attribute": 9}})
    assert clash.status_code == 409
    assert clash.headers["content-type"].startswith("application/problem+json")
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


def test_concurrent_duplicates_resolve_to_one_entry(client: httpx.Client, table: str) -> None:
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda _: post(client, table, "burst"), range(16)))
    assert {r.status_code for r in responses} == {200}
    assert {r.json()["receipt"]["seq"] for r in responses} == {1}
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


def test_a_refused_request_does_not_keep_the_key(client: httpx.Client, table: str) -> None:
    bad = post(
        client, table, "fix-me", {"a": {"attribute": 12, "dice_count": 3}, "b": {"attribute": 12}}
    )
    assert bad.status_code == 422
    assert post(client, table, "fix-me").status_code == 200


def test_keys_are_per_table(client: httpx.Client, table: str) -> None:
    first = post(client, table, "shared")
    second = post(client, table + "-b", "shared")
    assert first.json()["receipt"]["table"] != second.json()["receipt"]["table"]


def test_a_malformed_key_is_refused_by_name(client: httpx.Client, table: str) -> None:
    response = post(client, table, "not ok")
    assert response.status_code == 422
    assert response.json()["invalid_params"][0]["name"] == "Idempotency-Key"


def test_repeated_redis_stalls_never_roll_twice_nor_leave_a_key_stuck(tmp_path: Path) -> None:
    """Redis is frozen (SIGSTOP) again and again for 0.2-1.5 s, longer than the client
    timeout (0.5 s), at whatever point each roll is in; every logical roll is retried with
    its key until answered. Each is recorded exactly once, and each key is answered."""
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    server = LiveServer(redis.url, tmp_path / "server.log")
    rng = random.Random(7)
    stop = threading.Event()
    answers: dict[str, dict[str, object]] = {}
    refused: list[int] = []
    lock = threading.Lock()

    def stall() -> None:
        pid = redis.pid
        assert pid is not None
        while not stop.is_set():
            os.kill(pid, signal.SIGSTOP)
            time.sleep(rng.uniform(0.2, 1.5))
            os.kill(pid, signal.SIGCONT)
            time.sleep(rng.uniform(0.05, 0.4))

    def rolls(worker: int) -> None:
        with httpx.Client(base_url=server.url, timeout=3) as client:
            time.sleep(0.1 * worker)
            for n in range(ROLLS_EACH):
                key = f"w{worker}-{n}"
                body = {**BODY, "seed": key}  # the entry's seed names its logical roll
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        response = post(client, "stalls", key, body)
                    except httpx.HTTPError:
                        continue
                    if response.status_code == 200:
                        with lock:
                            answers[key] = response.json()["receipt"]
                        break
                    assert response.status_code in (409, 503), response.text
                    with lock:
                        refused.append(response.status_code)
                    time.sleep(0.05)

    staller = threading.Thread(target=stall)
    try:
        staller.start()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(rolls, range(4)))
        stop.set()
        staller.join()
        with httpx.Client(base_url=server.url, timeout=10) as client:
            listed = client.get("/v1/tables/stalls/entries")
            assert listed.status_code == 200, listed.text
            entries = listed.json()["entries"]
    finally:
        stop.set()
        if redis.pid is not None:
            os.kill(redis.pid, signal.SIGCONT)
        server.stop()
        redis.stop()
    assert refused, "no stall met a roll: the test proved nothing"
    assert len(answers) == 4 * ROLLS_EACH, "a key was left without an answer"
    seeds = [entry["seed"] for entry in entries]
    assert sorted(seeds) == sorted(answers), "a logical roll was recorded twice (or not)"
    by_seq = {entry["seq"]: entry["entry_hash"] for entry in entries}
    for receipt in answers.values():
        assert by_seq[receipt["seq"]] == receipt["entry_hash"]
