"""A round's batch on the store's own connection against redis-py's pipeline (issue 20).

    python benchmarks/round_batch.py [--rolls 3200] [--concurrency 32] [--alternations 12]

The real ``AuditStore`` appends pre-made FBC drafts, ``--concurrency`` tables in flight
(so a round carries that many script calls and Redis's confirmation), against a private
``redis-server`` (AOF, ``appendfsync always``). Each alternation runs both ways in a
random order, in the same process and on the same Redis: the round's calls sent by
``PackingConnection.execute_batch`` (one write, one timer for the batch) and by
redis-py's pipeline (what the store used before; a timer per reply). It prints this
process's CPU and the elapsed time per append, medians and minima, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import msgspec
from redis.asyncio import Redis

from fairroll.audit import AuditStore, connect_redis
from fairroll.audit.signing import Signer
from fairroll.redis_server import RedisServer, free_port
from roll_cost import BODY, ROLL, TYPES, roll_draft

Batch = Callable[[AuditStore, list[tuple[Any, ...]]], Awaitable[list[Any]]]


async def pipelined(store: AuditStore, calls: list[tuple[Any, ...]]) -> list[Any]:
    """The round as redis-py's pipeline sends it (the store's path before)."""
    pipe = cast(Redis, store.redis).pipeline(transaction=False)
    for call in calls:
        pipe.execute_command(*call)
    return cast(list[Any], await pipe.execute(raise_on_error=False))


WAYS: dict[str, Batch] = {"redis-py pipeline": pipelined, "execute_batch": AuditStore._batch}


async def run(url: str, rolls: int, concurrency: int, alternations: int) -> None:
    redis = connect_redis(url, 5.0)
    store = AuditStore(redis, Signer.generate())
    given = ROLL.input_of(msgspec.json.decode(BODY, type=TYPES.request))
    drafts = [roll_draft(given, f"batch-{i % concurrency}") for i in range(rolls)]
    for draft in drafts[:concurrency]:  # every table's tip, and the key published
        await store.append(draft)

    async def lane(i: int) -> None:
        for draft in drafts[i::concurrency]:
            await store.append(draft)

    measured: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
    for _ in range(alternations):
        for way in random.sample(list(WAYS), len(WAYS)):
            AuditStore._batch = WAYS[way]  # type: ignore[method-assign]
            start, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(lane(i) for i in range(concurrency)))
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            measured[way].append((cpu / rolls * 1e6, elapsed / rolls * 1e6))
    await redis.aclose()
    print(f"{rolls} appends a run, {concurrency} tables in flight, {alternations} alternations")
    print(f"{'way':<20} {'CPU µs':>8} {'(min)':>7} {'elapsed µs':>11} {'(min)':>7}")
    medians = {}
    for way, runs in measured.items():
        cpu_runs, elapsed_runs = [c for c, _ in runs], [e for _, e in runs]
        medians[way] = statistics.median(cpu_runs)
        print(
            f"{way:<20} {medians[way]:>8.1f} {min(cpu_runs):>7.1f} "
            f"{statistics.median(elapsed_runs):>11.1f} {min(elapsed_runs):>7.1f}"
        )
    ratio = medians["execute_batch"] / medians["redis-py pipeline"]
    print(f"CPU per append, execute_batch / pipeline: {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=3200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--alternations", type=int, default=12)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        RedisServer(Path(folder) / "redis", port=free_port()) as redis,
    ):
        asyncio.run(run(redis.url, args.rolls, args.concurrency, args.alternations))


if __name__ == "__main__":
    main()
