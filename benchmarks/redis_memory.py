"""Redis memory per audit entry, over 100,000 real entries.

Run: python benchmarks/redis_memory.py [--entries 100000] [--tables 1000] [--mechanic tft]

Starts a private redis-server, appends signed entries through the real AuditStore
(the same chaining, signing and compare-and-append script the service uses; the
draft is a real roll of the mechanic with fresh seeded dice), then reports
``used_memory`` growth per entry from ``INFO memory`` and ``MEMORY USAGE`` of the
tables' keys (stream + head) per entry, beside the size of the entry's JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import msgspec
import uvloop

from fairroll.audit import AuditStore, Draft, Signer
from fairroll.audit.store import connect_redis
from fairroll.mechanics import MECHANICS
from fairroll.randomness import SeededDice, new_seed
from fairroll.redis_server import RedisServer, free_port
from fairroll.rules import fbc, tft, tribute

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
        source="seeded",
        seed=dice.seed,
        dice=dice.dice,
        outcome=outcome,
        session=None,
    )


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--mechanic", default="tft.contest", choices=sorted(INPUTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp), port=free_port()) as redis:
        uvloop.run(fill(redis.url, args.entries, args.tables, args.mechanic))


if __name__ == "__main__":
    main()
