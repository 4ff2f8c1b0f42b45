"""A roll's session token is checked by the append that would store it, and the append's
maxmemory guard runs when it may matter, not on every call (issue 40, second pass).

The token check used to be a round trip of its own before every roll in a session (an
``HMGET`` of the session's hash, and an ``HSET`` the first time it bound); the append
script now compares the token's digest with the session's in the same atomic step, and
refuses before it writes anything. The guard (``INFO memory``, the script's costliest
command) runs on a node's first append, at least every ``GUARD_SECONDS``, and on every
append once Redis was found near its ``maxmemory`` (``tests/test_storage_pressure.py``
holds the refusal itself).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from redis import Redis

from fairroll.audit.keyspace import client_seeds_key, head_key, log_key, session_key
from fairroll.audit.redis import append
from fairroll.audit.redis.append import GUARD_SECONDS, MemoryGuard
from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
HEADER = "Fairroll-Session-Token"
DONE = "fairroll-test-monitor-done"


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RedisServer, LiveServer]]:
    """A Redis of its own (its command stream is read whole) and a default server on it."""
    folder = tmp_path_factory.mktemp("own")
    with RedisServer(folder / "redis", port=free_port()) as redis:
        server = LiveServer(redis.url, folder / "fairroll.log")
        try:
            yield redis, server
        finally:
            server.stop()


def open_session(client: httpx.Client, table: str) -> tuple[str, str]:
    opened = client.post(f"/v1/tables/{table}/seeds", json={"player": "alice"})
    assert opened.status_code == 201, opened.text
    return opened.json()["seed_id"], opened.json()["token"]


def roll(client: httpx.Client, table: str, seed_id: str, token: str | None) -> httpx.Response:
    headers = {HEADER: token} if token is not None else {}
    body: dict[str, Any] = {
        **BODY,
        "table": table,
        "session": {"seed_id": seed_id, "client_seed": secrets.token_hex(8)},
    }
    return client.post("/v1/tft/contests", json=body, headers=headers)


def snapshot(redis: Redis, table: str, seed_id: str) -> tuple[Any, ...]:
    return (
        redis.xlen(log_key(table)),
        redis.get(head_key(table)),
        redis.hgetall(session_key(table, seed_id)),
        redis.hgetall(client_seeds_key(table)),
    )


def test_a_roll_with_a_missing_or_wrong_session_token_writes_nothing(
    own: tuple[RedisServer, LiveServer],
) -> None:
    """Issue 39's stranger, now refused by the append script: the log's length and head,
    the session's hash (its nonce, its binding) and the table's client seeds are what
    they were before each refused try, and the player's next roll takes nonce 2."""
    redis_server, server = own
    table = "t-" + secrets.token_hex(8)
    with (
        httpx.Client(base_url=server.url, timeout=10) as http,
        Redis.from_url(redis_server.url) as redis,
    ):
        seed_id, token = open_session(http, table)
        assert roll(http, table, seed_id, token).status_code == 200
        before = snapshot(redis, table, seed_id)
        for guess in (None, "not-her-token", token[:-1]):
            refused = roll(http, table, seed_id, guess)
            assert refused.status_code == 403, refused.text
            assert seed_id in refused.json()["detail"]
            assert snapshot(redis, table, seed_id) == before
        mine = roll(http, table, seed_id, token)
        assert mine.status_code == 200, mine.text
        assert mine.json()["session"]["nonce"] == 2


def test_a_session_roll_makes_no_round_trip_for_its_token(
    own: tuple[RedisServer, LiveServer],
) -> None:
    """Every command the server sends Redis while a player rolls in her session, read
    from ``MONITOR``: none but the appends touches the session's hash, so the token is
    checked, and the session bound, inside the append. The old check sent an ``HMGET``
    of the hash before every roll."""
    redis_server, server = own
    table = "t-" + secrets.token_hex(8)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        seed_id, token = open_session(http, table)
        assert roll(http, table, seed_id, token).status_code == 200  # the session is read
        commands = _monitored(redis_server.url, lambda: _rolls(http, table, seed_id, token, 5))
    key = session_key(table, seed_id)
    sent = [c for c in commands if c["client_type"] != "lua"]
    assert any("EVALSHA" in c["command"].upper() for c in sent)  # the appends were seen
    # The appends name the hash among their KEYS; no other command names it.
    others = [c["command"] for c in sent if not c["command"].upper().startswith("EVAL")]
    assert not [c for c in others if key in c], others
    with Redis.from_url(redis_server.url) as redis:
        assert redis.hget(key, "bound") == b"1"


def test_the_memory_guard_runs_at_most_once_an_interval_far_from_full(
    own: tuple[RedisServer, LiveServer],
) -> None:
    """Rolls back to back on a Redis far from its ``maxmemory`` (none set): the append
    script's ``INFO memory`` runs at most once per ``GUARD_SECONDS`` of the run (and
    once more at its start), where it ran on every append."""
    redis_server, server = own
    table = "t-" + secrets.token_hex(8)
    rolls = 20
    with httpx.Client(base_url=server.url, timeout=10) as http:
        first = http.post("/v1/fbc/rolls", json={"pool": 6, "risk": 2, "table": table})
        assert first.status_code == 200, first.text
        started = time.monotonic()

        def run() -> None:
            for _ in range(rolls):
                answer = http.post("/v1/fbc/rolls", json={"pool": 6, "risk": 2, "table": table})
                assert answer.status_code == 200, answer.text

        commands = _monitored(redis_server.url, run)
        elapsed = time.monotonic() - started
    scripted = [c for c in commands if c["client_type"] == "lua"]
    assert any(c["command"].upper().startswith("XADD") for c in scripted)
    guards = [c for c in scripted if c["command"].upper().startswith("INFO")]
    assert len(guards) <= 2 + elapsed / GUARD_SECONDS, (len(guards), elapsed)
    if elapsed < rolls * GUARD_SECONDS / 2:
        assert len(guards) < rolls


def test_the_guard_is_due_first_then_each_interval_and_always_when_near(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``MemoryGuard``'s rule, per node: a node's first append checks; one found far from
    full is checked again after ``GUARD_SECONDS``; one found at ``NEAR_RATIO`` or more is
    checked on every append; a failed call forgets what was found."""
    now = [100.0]
    monkeypatch.setattr(append.time, "monotonic", lambda: now[0])
    guard = MemoryGuard()
    assert guard.due("a") and guard.due("b")
    guard.observe("a", used=10, limit=100)
    assert not guard.due("a") and guard.due("b")
    now[0] += GUARD_SECONDS * 0.9
    assert not guard.due("a")
    now[0] += GUARD_SECONDS * 0.2
    assert guard.due("a")
    guard.observe("a", used=int(100 * append.NEAR_RATIO), limit=100)
    assert guard.due("a")
    guard.observe("a", used=10**9, limit=0)  # no maxmemory: nothing to be near
    assert not guard.due("a")
    guard.forget("a")
    assert guard.due("a")


def _rolls(http: httpx.Client, table: str, seed_id: str, token: str, count: int) -> None:
    for _ in range(count):
        answer = roll(http, table, seed_id, token)
        assert answer.status_code == 200, answer.text


def _monitored(url: str, action: Any) -> list[dict[str, Any]]:
    """The commands Redis ran (``MONITOR``) while ``action`` ran."""
    seen: list[dict[str, Any]] = []
    ready = threading.Event()
    with Redis.from_url(url) as redis, redis.monitor() as monitor:

        def read() -> None:
            ready.set()
            for command in monitor.listen():
                if DONE in command["command"]:
                    return
                seen.append(command)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        ready.wait(5)
        time.sleep(0.2)
        action()
        with Redis.from_url(url) as other:
            other.echo(DONE)
        reader.join(10)
        assert not reader.is_alive()
    return seen
