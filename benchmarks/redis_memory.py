"""Redis memory per audit entry, per table and per seed session.

Run: python benchmarks/redis_memory.py [--entries 100000] [--tables 1000] [--mechanic tft]
     python benchmarks/redis_memory.py --per-table [--tables 10000] [--rolls 3]
                                       [--sessions 10000]

Starts a private redis-server. By default, appends signed entries through the real
AuditStore (the same chaining, signing and compare-and-append script the service uses;
the draft is a real roll of the mechanic with fresh seeded dice), then reports
``used_memory`` growth per entry from ``INFO memory`` and ``MEMORY USAGE`` of the
tables' keys (stream + head) per entry, beside the size of the entry's JSON.

``--per-table``: fairroll's own app in this process (``create_app``, driven over ASGI as
``roll_cost.py`` does) rolls ``--rolls`` FBC rolls with drawn seeds on each of
``--tables`` new tables, then opens a hash-chain seed session (the default kind, its
commitment appended to the log) on ``--sessions`` of those tables and rolls once in
each (with its session token). After each step it reports the ``used_memory`` growth
per table or per session, and ``MEMORY USAGE`` of every key, summed by kind (the part
of the name after the table's hash tag; a session's ``seed:<id>``, the deployment's
own keys by name): what a table and a session are made of.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import uvloop
from redis import Redis

from fairroll.api.app import create_app
from fairroll.api.settings import Settings
from fairroll.audit import AuditStore, Draft, Signer
from fairroll.audit.store import connect_redis
from fairroll.mechanics import MECHANICS
from fairroll.randomness import SeededDice, new_seed
from fairroll.redis_server import RedisServer, free_port
from fairroll.rules import fbc, tft, tribute
from roll_cost import Lifespan, scope_of

INPUTS = {
    "tft.contest": tft.Contest(
        a=tft.Contestant(name="Roth", attribute=16, talents=2),
        b=tft.Contestant(name="Sheena", attribute=12),
        victory_levels=True,
    ),
    "fbc.roll": fbc.Roll(pool=10, risk=5),
    "tribute.test": tribute.Test(reality="d12", rank=0, focus=6, burden=6, difficulty=0),
}


def draft(mechanic: str, table: str) -> Draft:
    rules = MECHANICS[mechanic]
    request = INPUTS[mechanic]
    dice = SeededDice(new_seed())
    outcome = rules.resolve(request, dice)
    return Draft(
        table=table,
        mechanic=mechanic,
        request=request,
        source="drawn",
        seed=dice.seed,
        dice=dice.dice,
        outcome=outcome,
        session=None,
    )


async def build(
    store: AuditStore, counts: dict[str, int], mechanic: str = "fbc.roll", inflight: int = 2048
) -> float:
    """Append ``counts[table]`` real entries to each table through ``store``, ``inflight``
    drafts at a time (the group commit chains up to its batch of each table a round);
    return the seconds it took. The entries are the server's own: a real roll of
    ``mechanic`` with fresh seeded dice, chained, signed and stored by the append script.
    """
    left = dict(counts)
    started = time.perf_counter()
    while left:
        batch = []
        for table in list(left):
            take = min(left[table], max(1, inflight // len(left)))
            batch += [draft(mechanic, table) for _ in range(take)]
            left[table] -= take
            if not left[table]:
                del left[table]
        await asyncio.gather(*(store.append(d) for d in batch))
    return time.perf_counter() - started


async def fill(url: str, entries: int, tables: int, mechanic: str) -> None:
    redis = connect_redis(url, 5.0)
    store = AuditStore(redis, Signer.generate())
    await store.publish_key()
    info = await redis.info("memory")
    before = int(info["used_memory"])
    sample = msgspec.json.encode(await store.append(draft(mechanic, "sample")))
    started = time.perf_counter()
    done = 0
    while done < entries:
        batch = [
            draft(mechanic, f"mem-{(done + i) % tables}") for i in range(min(256, entries - done))
        ]
        await asyncio.gather(*(store.append(d) for d in batch))
        done += len(batch)
    elapsed = time.perf_counter() - started
    info = await redis.info("memory")
    after = int(info["used_memory"])
    usage = 0
    for i in range(tables):
        for key in (f"fairroll:{{mem-{i}}}:log", f"fairroll:{{mem-{i}}}:head"):
            usage += int(await redis.memory_usage(key, samples=0) or 0)
    await redis.aclose()
    print(
        f"{entries} {mechanic} entries over {tables} tables ({entries // tables} each), "
        f"appended in {elapsed:.1f} s ({entries / elapsed:.0f}/s through AuditStore)"
    )
    print(f"entry JSON: {len(sample)} bytes")
    print(f"INFO used_memory growth: {(after - before) / entries:.0f} bytes per entry")
    print(f"MEMORY USAGE of the tables' keys: {usage / entries:.0f} bytes per entry")


async def call(
    app: Any, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """One request to ``app`` over ASGI, with ``headers``: its status and JSON answer."""
    data = b"" if body is None else json.dumps(body).encode()
    scope = scope_of(method, path, len(data))
    scope["headers"] += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    answered: dict[str, Any] = {"status": 0, "body": b""}
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if asked:
            await asyncio.sleep(3600)
        asked = True
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answered["body"] += message.get("body", b"")

    await app(scope, receive, send)
    text = answered["body"]
    return answered["status"], json.loads(text) if text else None


async def each(calls: list[Callable[[], Awaitable[tuple[int, Any]]]], want: int) -> list[Any]:
    """Run ``calls`` 64 at a time; every answer must have status ``want``."""
    answers: list[Any] = []
    for at in range(0, len(calls), 64):
        for status, said in await asyncio.gather(*(c() for c in calls[at : at + 64])):
            if status != want:
                raise RuntimeError(f"{status} {said}")
            answers.append(said)
    return answers


def kind_of(key: str) -> str:
    """A key's kind: its part after the table's hash tag (a session's ``seed:<id>`` is
    ``seed:*``), or its own name for the deployment's keys."""
    if "}:" not in key:
        return key
    part = key.split("}:", 1)[1]
    return part.split(":", 1)[0] + ":*" if ":" in part else part


def usage_by_kind(client: Redis) -> dict[str, tuple[int, int]]:
    """Kind -> (keys, bytes of ``MEMORY USAGE``, every element counted)."""
    kinds: dict[str, tuple[int, int]] = {}
    for key in client.scan_iter(count=1000):
        name = key.decode()
        keys, size = kinds.get(kind_of(name), (0, 0))
        kinds[kind_of(name)] = (keys + 1, size + int(client.memory_usage(name, samples=0) or 0))
    return kinds


async def used_memory(client: Redis) -> tuple[int, int]:
    """``used_memory`` and ``used_memory_dataset`` (less Redis's own overhead: clients'
    buffers, the AOF buffer, the keyspace's tables), a second after the last request,
    when the buffers of the last requests are gone."""
    await asyncio.sleep(1.0)
    info = client.info("memory")
    return int(info["used_memory"]), int(info["used_memory_dataset"])


async def per_table(url: str, tables: int, rolls: int, sessions: int) -> None:
    settings = Settings.from_env(
        {
            "REDIS_URL": url,
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_COMPUTE_WORKERS": "0",
            "FAIRROLL_RATE_LIMIT": "0",
        }
    )
    app = create_app(settings)
    client = Redis.from_url(url)
    names = [f"t{i:05d}" for i in range(tables)]
    async with Lifespan(app):
        await each([lambda: call(app, "GET", "/readyz")], 200)
        steps = [("start", await used_memory(client), usage_by_kind(client))]
        await each(
            [
                lambda t=t: call(app, "POST", "/v1/fbc/rolls", {"table": t, "pool": 10, "risk": 5})
                for t in names
                for _ in range(rolls)
            ],
            200,
        )
        steps.append((f"{tables:,} tables", await used_memory(client), usage_by_kind(client)))
        opened = await each(
            [lambda t=t: call(app, "POST", f"/v1/tables/{t}/seeds") for t in names[:sessions]],
            201,
        )
        steps.append(
            (f"{sessions:,} sessions opened", await used_memory(client), usage_by_kind(client))
        )
        await each(
            [
                lambda t=t, o=o: call(
                    app,
                    "POST",
                    "/v1/fbc/rolls",
                    {
                        "table": t,
                        "pool": 10,
                        "risk": 5,
                        "session": {
                            "seed_id": o["seed_id"],
                            "client_seed": os.urandom(16).hex(),
                            "nonce": 1,
                        },
                    },
                    {"Fairroll-Session-Token": o["token"]},
                )
                for t, o in zip(names, opened, strict=False)
            ],
            200,
        )
        steps.append(("one roll in each session", await used_memory(client), usage_by_kind(client)))
    client.close()
    units = [1, tables, sessions, sessions]
    for (name, used, kinds), (_, used_before, kinds_before), unit in zip(
        steps[1:], steps[:-1], units[1:], strict=True
    ):
        print(
            f"{name}: used_memory {(used[0] - used_before[0]) / unit:+,.0f} B each, "
            f"used_memory_dataset {(used[1] - used_before[1]) / unit:+,.0f} B each"
        )
        for kind in sorted(kinds, key=lambda k: -kinds[k][1]):
            keys, size = kinds[kind]
            keys_before, size_before = kinds_before.get(kind, (0, 0))
            if size != size_before:
                print(
                    f"  {kind:<24} keys {keys:>7,} (+{keys - keys_before:,}), MEMORY USAGE "
                    f"+{(size - size_before) / unit:,.0f} B each"
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=None, help="1,000; 10,000 --per-table")
    parser.add_argument("--mechanic", default="tft.contest", choices=sorted(INPUTS))
    parser.add_argument("--per-table", action="store_true", help="tables and sessions")
    parser.add_argument("--rolls", type=int, default=3, help="on each table (--per-table)")
    parser.add_argument("--sessions", type=int, default=10_000, help="(--per-table)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp), port=free_port()) as redis:
        if args.per_table:
            tables = args.tables or 10_000
            uvloop.run(per_table(redis.url, tables, args.rolls, min(args.sessions, tables)))
        else:
            uvloop.run(fill(redis.url, args.entries, args.tables or 1000, args.mechanic))


if __name__ == "__main__":
    main()
