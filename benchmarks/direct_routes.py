"""The roll routes answered directly (``api.direct``) against Litestar's routing (issue 20).

    python benchmarks/direct_routes.py [--rolls 3000] [--concurrency 32] [--alternations 8]

fairroll's own app (``create_app``, a private ``redis-server`` with AOF, a real key, no
compute workers) is driven in process over ASGI (``roll_cost.Asgi``), FBC rolls over
1,000 tables, ``--concurrency`` in flight. Each alternation runs the same rolls both
ways in a random order, in the same process and on the same Redis: with the direct
routes, and with them switched off (``app.direct = None``: every request through
Litestar's router and handler machinery). It prints this process's CPU and the elapsed
time per roll, medians and minima, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import random
import statistics
import tempfile
from pathlib import Path
from typing import Any

from fairroll.api.app import create_app
from fairroll.api.settings import Settings
from fairroll.redis_server import RedisServer, free_port
from roll_cost import Asgi, Lifespan, per_request


async def run(url: str, rolls: int, concurrency: int, alternations: int) -> None:
    bodies = [f'{{"table":"bench-{i % 1000}","pool":10,"risk":5}}'.encode() for i in range(rolls)]
    settings = Settings.from_env(
        {
            "REDIS_URL": url,
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_COMPUTE_WORKERS": "0",
        }
    )
    app: Any = create_app(settings)
    ways = {"Litestar's routing": None, "direct": app.direct}
    measured: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
    async with Lifespan(app):
        driver = Asgi(app, "/v1/fbc/rolls")
        await per_request(driver.call, bodies, concurrency)  # every table's tip
        for _ in range(alternations):
            for way in random.sample(list(ways), len(ways)):
                app.direct = ways[way]
                elapsed, cpu = await per_request(driver.call, bodies, concurrency)
                measured[way].append((cpu, elapsed))
    print(f"{rolls} FBC rolls a run, {concurrency} in flight, {alternations} alternations")
    print(f"{'way':<20} {'CPU µs':>8} {'(min)':>7} {'elapsed µs':>11} {'(min)':>7}")
    medians = {}
    for way, runs in measured.items():
        cpu_runs, elapsed_runs = [c for c, _ in runs], [e for _, e in runs]
        medians[way] = statistics.median(cpu_runs)
        print(
            f"{way:<20} {medians[way]:>8.1f} {min(cpu_runs):>7.1f} "
            f"{statistics.median(elapsed_runs):>11.1f} {min(elapsed_runs):>7.1f}"
        )
    ratio = medians["direct"] / medians["Litestar's routing"]
    print(f"CPU per roll, direct / Litestar's routing: {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--alternations", type=int, default=8)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        RedisServer(Path(folder) / "redis", port=free_port()) as redis,
    ):
        asyncio.run(run(redis.url, args.rolls, args.concurrency, args.alternations))


if __name__ == "__main__":
    main()
