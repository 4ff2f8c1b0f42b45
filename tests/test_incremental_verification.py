"""The server's own verification (``GET .../verification``) goes on from where the last
one stopped: a log longer than one request's time is verified a part at a time (202,
``complete: false``), never 503 for its size, and ends with the report an offline
verifier gives; a state forged into Redis is not taken, a fault after the kept state
is answered every time, and ``?full=true`` reads the whole log again."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import msgspec
import pytest
from redis import Redis

from fairroll.audit import Trust, verify_entries
from fairroll.audit.keyspace import log_key, verified_key
from fairroll.audit.reader import stored_json
from fairroll.mechanics import replay_entry
from fairroll.redis_server import RedisServer, free_port
from support import LiveServer

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    # Its own Redis: thousands of rolls must not slow the shared one's other tests.
    with RedisServer(tmp_path_factory.mktemp("incremental-redis"), port=free_port()) as redis:
        yield redis


@pytest.fixture(scope="module")
def server(private_redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # A calculation deadline of 1 s: a verification reads for half of it, then answers.
    live = LiveServer(
        private_redis.url,
        tmp_path_factory.mktemp("incremental") / "server.log",
        env={"FAIRROLL_REDIS_TIMEOUT": "5", "FAIRROLL_COMPUTE_TIMEOUT": "1"},
    )
    yield live.url
    live.stop()


@pytest.fixture
def redis_client(private_redis: RedisServer) -> Iterator[Redis]:
    client = Redis.from_url(private_redis.url)
    yield client
    client.close()


def roll(url: str, table: str, count: int) -> None:
    async def run() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            semaphore = asyncio.Semaphore(8)

            async def one() -> None:
                async with semaphore:
                    answer = await http.post("/v1/tft/contests", json={"table": table, **BODY})
                    assert answer.status_code == 200, answer.text

            await asyncio.gather(*(one() for _ in range(count)))

    asyncio.run(run())


def offline(http: httpx.Client, table: str) -> dict[str, object]:
    lines = http.get(f"/v1/tables/{table}/export").content.splitlines()
    root = http.get("/v1/keys").json()["root"]
    report = verify_entries(lines, Trust(keys=None, root=root), replay=replay_entry)
    return msgspec.to_builtins(report)  # type: ignore[no-any-return]


SAME = ("ok", "entries", "first_seq", "last_seq", "head_hash", "root_hash", "sources")


def test_a_long_log_is_verified_a_part_at_a_time_to_the_offline_verdict(
    server: str, table: str
) -> None:
    roll(server, table, 4000)
    with httpx.Client(base_url=server, timeout=30) as http:
        parts, seen = 0, 0
        while True:
            answer = http.get(f"/v1/tables/{table}/verification")
            assert answer.status_code in (200, 202), answer.text
            report = answer.json()
            assert report["ok"], report
            if answer.status_code == 200:
                break
            parts += 1
            assert report["complete"] is False and answer.headers["retry-after"] == "1"
            assert report["last_seq"] > seen  # each part goes on from the last
            seen = report["last_seq"]
            assert parts < 100
        assert parts >= 1  # the log was longer than one request's time
        want = offline(http, table)
        assert report["complete"] is True
        assert {k: report[k] for k in SAME} == {k: want[k] for k in SAME}
        # Rolls since: the next verification reads only them, in one answer.
        roll(server, table, 5)
        again = http.get(f"/v1/tables/{table}/verification")
        assert again.status_code == 200 and again.json()["entries"] == 4005


def test_a_state_forged_into_redis_is_not_taken(
    server: str, table: str, redis_client: Redis
) -> None:
    roll(server, table, 10)
    with httpx.Client(base_url=server, timeout=30) as http:
        honest = http.get(f"/v1/tables/{table}/verification").json()
        assert honest["ok"] and honest["entries"] == 10
        kept = json.loads(redis_client.get(verified_key(table)) or b"{}")
        # The operator's database edited: the state claims 999 committed rolls.
        kept["state"]["sources"] = {"committed": 999}
        redis_client.set(verified_key(table), json.dumps(kept))
        report = http.get(f"/v1/tables/{table}/verification").json()
        assert report["sources"] == honest["sources"] and report["entries"] == 10
        # Garbage in its place is not taken either.
        redis_client.set(verified_key(table), b"not json")
        assert http.get(f"/v1/tables/{table}/verification").json() == honest


def test_a_fault_after_the_kept_state_is_answered_every_time(
    server: str, table: str, redis_client: Redis
) -> None:
    roll(server, table, 20)
    with httpx.Client(base_url=server, timeout=30) as http:
        assert http.get(f"/v1/tables/{table}/verification").json()["ok"]
        roll(server, table, 5)
        tamper(redis_client, table, 23)
        for _ in range(2):  # not hidden by a restart from seq 1 the next time
            report = http.get(f"/v1/tables/{table}/verification").json()
            assert not report["ok"] and report["first_bad_seq"] == 23, report


def test_full_reads_again_what_the_kept_state_vouches_for(
    server: str, table: str, redis_client: Redis
) -> None:
    roll(server, table, 20)
    with httpx.Client(base_url=server, timeout=30) as http:
        assert http.get(f"/v1/tables/{table}/verification").json()["ok"]
        tamper(redis_client, table, 5)  # behind the server's back, chain and tree left
        # On from the kept state, the entries it verified are not read again (as
        # documented); the whole log read again finds the rewrite.
        assert http.get(f"/v1/tables/{table}/verification").json()["ok"]
        full = http.get(f"/v1/tables/{table}/verification", params={"full": "true"}).json()
        assert not full["ok"] and full["first_bad_seq"] == 5, full


def tamper(redis: Redis, table: str, seq: int) -> None:
    """Rewrite entry ``seq``'s outcome where Redis keeps it, nothing else: the chain,
    its hash and signature and the tree stay as they were."""
    key = log_key(table)
    rows = redis.xrange(key)
    for stream_id, fields in rows:
        if stream_id.startswith(f"{seq}-".encode()):
            entry = json.loads(stored_json(fields))
            entry["outcome"]["a_dice"] += 1
            fields.clear()
            fields[b"e"] = json.dumps(entry, separators=(",", ":"), sort_keys=True).encode()
    redis.delete(key)  # the stream rewritten whole (stream ids only grow)
    for stream_id, fields in rows:
        redis.xadd(key, fields, id=stream_id)
