"""Rolls per second with 1, 2 and 4 worker processes, on one Redis and on a Redis Cluster.

Run:  python benchmarks/scale_out.py [--workers 1,2,4] [--backends single,cluster]
                                     [--seconds 5] [--connections 32] [--rounds 2]

For each backend it starts a private store: one ``redis-server`` (AOF, ``appendfsync
always``, as ``harness.py``), or a Redis Cluster of three primaries on loopback, each
with its AOF fsynced always (``tests/redis_cluster.py``, the suite's own cluster: no
replicas, ``cluster-require-full-coverage no``). Then, for each worker count, ``fairroll
serve --workers N`` (granian, as ``harness.py`` starts it) takes FBC rolls from wrk spread
over ``--tables`` tables; every table's keys carry its name as a hash tag, so on the
cluster the tables spread over the three primaries by the hash of their names.

Each run starts once every worker and its compute worker have started and gone idle
(``settle``: on a loaded machine their imports run on well after the first worker
answers), and prints req/s and p99, and the CPU each side spent per roll (from
``/proc/<pid>/stat``, the run's delta): the fairroll processes together, and the Redis
processes together. Those two figures are what the extrapolation to a larger cluster in
docs/performance.md rests on; the req/s is what this 2-core machine, shared by wrk,
the workers and Redis, lets through. The worker counts are alternated (the order
reversed every round), so a slow spell of the machine lands on each.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from fairroll.redis_server import RedisServer, free_port
from harness import LUA, SCENARIOS, start, stop, wrk
from soak import children

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from redis_cluster import RedisCluster

TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Run:
    backend: str
    workers: int
    rps: float
    p99_ms: float
    failed: int
    server_us: float
    redis_us: float


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of ``pids`` so far (a process gone counts nothing)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (granian's workers, and theirs)."""
    found = [pid]
    for child in children(pid):
        found += descendants(child)
    return found


def serve(
    redis_url: str, key: str | None, log: Path, workers: int = 1
) -> tuple[subprocess.Popen[bytes], str]:
    """``fairroll serve --workers N`` on a free port, as ``harness.py`` starts it, with
    the signing key ``key`` (a fresh one for None): the process, once it answers, and
    its base URL."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "FAIRROLL_SIGNING_KEY": key or base64.b64encode(os.urandom(32)).decode(),
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)]
    return start([*command, "--workers", str(workers)], env, log, f"{base}/livez"), base


def settle(pid: int, workers: int, timeout: float = 180.0) -> list[int]:
    """Wait until the server under ``pid`` has its workers and their compute workers
    (one each) and sits idle for a second: on a loaded machine their imports run on
    well after the first worker answers, and would be counted as the rolls' CPU. The
    processes, then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = descendants(pid)
        before = cpu_seconds(pids)
        time.sleep(1.0)
        if len(pids) >= 1 + 2 * workers and cpu_seconds(pids) - before < 0.1:
            return pids
    raise RuntimeError(f"the server did not settle: {descendants(pid)}")


@contextmanager
def backend(name: str, folder: Path) -> Iterator[tuple[str, list[int], list[redis.Redis]]]:
    """The store's URL, its processes and a client per primary."""
    if name == "single":
        with RedisServer(folder / "redis", port=free_port()) as single:
            client = redis.Redis.from_url(single.url)
            try:
                yield single.url, [single.pid or 0], [client]
            finally:
                client.close()
        return
    cluster = RedisCluster(folder / "cluster").start()
    clients = [redis.Redis(port=node.port) for node in cluster.nodes]
    try:
        pids = [node.process.pid for node in cluster.nodes if node.process is not None]
        yield cluster.url, pids, clients
    finally:
        for client in clients:
            client.close()
        cluster.stop()


def measure(
    name: str, workers: int, args: argparse.Namespace, folder: Path, url: str, redis_pids: list[int]
) -> Run:
    server, base = serve(url, None, folder / f"fairroll-{name}-{workers}.log", workers)
    try:
        settle(server.pid, workers)
        path, body = SCENARIOS["fbc"]
        script = folder / "fbc.lua"
        script.write_text(LUA % {"tables": args.tables, "body": body})
        wrk(base + path, script, 2, args.connections)  # warm-up: every worker, every table
        pids = settle(server.pid, workers)
        server_before, redis_before = cpu_seconds(pids), cpu_seconds(redis_pids)
        rps, _, p99, _, non2xx, errors = wrk(base + path, script, args.seconds, args.connections)
        server_cpu = cpu_seconds(pids) - server_before
        redis_cpu = cpu_seconds(redis_pids) - redis_before
    finally:
        stop(server)
    rolls = rps * args.seconds
    return Run(
        name,
        workers,
        rps,
        p99,
        int(non2xx + errors),
        server_cpu / rolls * 1e6,
        redis_cpu / rolls * 1e6,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--backends", default="single,cluster")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    runs: list[Run] = []
    spread: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.backends.split(","):
            folder = Path(tmp) / name
            folder.mkdir()
            with backend(name, folder) as (url, redis_pids, clients):
                for number in range(args.rounds):
                    for workers in counts if number % 2 == 0 else counts[::-1]:
                        run = measure(name, workers, args, folder, url, redis_pids)
                        runs.append(run)
                        print(
                            f"  {name}, {workers} worker(s): {run.rps:,.0f} req/s, "
                            f"p99 {run.p99_ms:.1f} ms",
                            flush=True,
                        )
                spread[name] = [
                    sum(1 for _ in client.scan_iter("fairroll:{*}:head", count=1000))
                    for client in clients
                ]
    report(runs, spread, args)


def report(runs: list[Run], spread: dict[str, list[int]], args: argparse.Namespace) -> None:
    print(
        f"FBC rolls over {args.tables} tables, wrk -t1 -c{args.connections}, "
        f"{args.seconds} s a run, {args.rounds} rounds alternated; CPU in µs per roll"
    )
    for name, tables in spread.items():
        print(f"{name}: tables per primary {tables}")
    print(
        f"{'backend':<8} {'workers':>7} {'req/s':>8} {'p99 ms':>7} {'failed':>6} "
        f"{'fairroll CPU':>12} {'Redis CPU':>9}"
    )
    for r in sorted(runs, key=lambda r: (r.backend != "single", r.workers)):
        print(
            f"{r.backend:<8} {r.workers:>7} {r.rps:>8,.0f} {r.p99_ms:>7.1f} {r.failed:>6} "
            f"{r.server_us:>12.0f} {r.redis_us:>9.0f}"
        )


if __name__ == "__main__":
    main()
