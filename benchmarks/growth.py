"""Rolls on a table of a million entries against rolls on a new one, in one run.

Run:  python benchmarks/growth.py [--sizes 1000,100000,1000000] [--seconds 5]
                                  [--connections 1,32] [--rounds 2]

Starts a private redis-server (AOF, ``appendfsync always``) and builds one table of each
size in this process, through the real ``AuditStore`` with the key the server is then
given: every entry is a real FBC roll (fresh seeded dice), chained, signed, added to the
table's Merkle tree and stored by the append script, as the server stores its own
(``redis_memory.build``). Only the build runs with ``appendfsync no`` (the store told it
may: the bytes are the same, only the fsync a round is skipped), so a million entries
take minutes, not an hour; the server runs with ``always``.

Then ``fairroll serve`` (one worker, as ``harness.py`` starts it) takes FBC rolls from
wrk on one table at a time: a new table (a name never rolled on) and each built table,
at each connection count, the order reversed every round, so a slow spell of the
shared machine lands on both. For each run it prints req/s, p50 and p99, and what
Redis spent per append script call (``INFO commandstats``, the calls of that run):
the part of a roll that could grow with the table.

``--keep DIR`` writes the largest table's export, ``GET /v1/keys`` and the root key id
there, for ``verify_rate.py --export``. ``--data DIR`` keeps Redis's data and the key in
``DIR`` (and reuses them: a table already as large as its size is not built again).
"""

from __future__ import annotations

import argparse
import base64
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis
import uvloop

from fairroll.audit import AuditStore
from fairroll.audit.signing import load_signer
from fairroll.audit.store import connect_redis
from fairroll.redis_server import RedisServer, free_port
from harness import LUA, SCENARIOS, stop, wrk
from redis_memory import build
from scale_out import cpu_seconds, serve, settle


@dataclass(frozen=True)
class Run:
    table: str
    entries: int
    connections: int
    rps: float
    p50_ms: float
    p99_ms: float
    failed: int
    script_us: float
    cpu_us: float


async def build_tables(url: str, seed: str, counts: dict[str, int]) -> float:
    """Build ``counts`` through the store with the server's key; the seconds it took."""
    client = connect_redis(url, 60.0)
    await client.config_set("appendfsync", "no")
    store = AuditStore(
        client, load_signer(key=seed, key_file=None, dev_dir=None), allow_unsafe=True
    )
    await store.publish_key()
    seconds = await build(store, counts)
    await client.config_set("appendfsync", "always")
    await client.aclose()
    return seconds


def script_stats(client: redis.Redis) -> tuple[int, int]:
    """Calls and microseconds of the append script so far (EVALSHA, and EVAL's first)."""
    stats = client.info("commandstats")
    calls = usec = 0
    for name in ("cmdstat_evalsha", "cmdstat_eval"):
        if name in stats:
            calls += int(stats[name]["calls"])
            usec += int(stats[name]["usec"])
    return calls, usec


def roll(
    base: str,
    table: str,
    connections: int,
    seconds: int,
    tmp: Path,
    client: redis.Redis,
    pids: list[int],
) -> tuple[float, float, float, int, float, float]:
    """wrk on ``table``: req/s, p50, p99, failures, Redis's µs per script call and the
    server's CPU µs per roll."""
    path, body = SCENARIOS["fbc"]
    script = tmp / f"{table}.lua"
    script.write_text(LUA % {"tables": 1, "body": body % table})
    calls, usec = script_stats(client)
    cpu = cpu_seconds(pids)
    rps, p50, p99, _, non2xx, errors = wrk(base + path, script, seconds, connections)
    cpu = cpu_seconds(pids) - cpu
    calls2, usec2 = script_stats(client)
    per_call = (usec2 - usec) / max(1, calls2 - calls)
    return rps, p50, p99, int(non2xx + errors), per_call, cpu / (rps * seconds) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", default="1,32")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write the largest table's export here")
    parser.add_argument("--data", type=Path, help="keep (and reuse) Redis's data and the key")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    connections = [int(c) for c in args.connections.split(",")]
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        data = args.data or tmp
        data.mkdir(parents=True, exist_ok=True)
        if not (data / "seed.txt").exists():
            (data / "seed.txt").write_text(base64.b64encode(os.urandom(32)).decode())
        seed = (data / "seed.txt").read_text().strip()
        with RedisServer(data / "redis", port=free_port()) as server_redis:
            client = redis.Redis.from_url(server_redis.url, socket_timeout=600)
            counts = {
                f"grow-{size}": size
                for size in sizes
                if client.xlen(f"fairroll:{{grow-{size}}}:log") < size
            }
            if counts:
                seconds = uvloop.run(build_tables(server_redis.url, seed, counts))
                built = sum(counts.values())
                print(
                    f"built {built:,} entries over {len(counts)} tables in {seconds:.0f} s "
                    f"({built / seconds:,.0f}/s, appendfsync no)",
                    flush=True,
                )
            server, base = serve(server_redis.url, seed, tmp / "fairroll.log")
            try:
                pids = settle(server.pid, 1)
                roll(base, "warm-up", 32, 2, tmp, client, pids)
                for number in range(args.rounds):
                    order = [0, *sizes] if number % 2 == 0 else [*reversed(sizes), 0]
                    for count in connections:
                        for size in order:
                            table = f"grow-{size}" if size else f"new-{number}-{count}"
                            entries = int(client.xlen(f"fairroll:{{{table}}}:log"))
                            rps, p50, p99, failed, per_call, cpu = roll(
                                base, table, count, args.seconds, tmp, client, pids
                            )
                            runs.append(
                                Run(table, entries, count, rps, p50, p99, failed, per_call, cpu)
                            )
                            print(
                                f"  round {number + 1}, {count:>2} conns, {entries:>9,} "
                                f"entries: {rps:,.0f} req/s, p99 {p99:.2f} ms",
                                flush=True,
                            )
                if args.keep is not None:
                    keep(base, f"grow-{max(sizes)}", args.keep)
            finally:
                stop(server)
                client.close()
    report(runs, args)


def keep(base: str, table: str, folder: Path) -> None:
    """The table's export, the served keys and the root key id, for ``verify_rate.py``."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with httpx.Client(base_url=base, timeout=600) as client:
        with (
            (folder / "export.ndjson").open("wb") as out,
            client.stream("GET", f"/v1/tables/{table}/export") as answer,
        ):
            for chunk in answer.iter_bytes(1 << 20):
                out.write(chunk)
        keys = client.get("/v1/keys")
        (folder / "keys.json").write_bytes(keys.content)
        (folder / "root.txt").write_text(keys.json()["root"] + "\n")
    print(f"kept {table}'s export in {folder} ({time.perf_counter() - started:.0f} s)")


def report(runs: list[Run], args: argparse.Namespace) -> None:
    print(
        f"FBC rolls, one table at a time, fairroll serve (1 worker), wrk -t1, "
        f"{args.seconds} s a run, {args.rounds} rounds alternated"
    )
    print(
        f"{'table':<16} {'entries':>10} {'conns':>5} {'req/s':>8} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'failed':>6} {'Redis µs/call':>13} {'CPU µs/roll':>11}"
    )
    for r in sorted(runs, key=lambda r: (r.connections, r.entries)):
        print(
            f"{r.table:<16} {r.entries:>10,} {r.connections:>5} {r.rps:>8,.0f} "
            f"{r.p50_ms:>7.2f} {r.p99_ms:>7.2f} {r.failed:>6} {r.script_us:>13.1f} "
            f"{r.cpu_us:>11.0f}"
        )


if __name__ == "__main__":
    main()
