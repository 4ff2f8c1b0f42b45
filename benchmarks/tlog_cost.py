"""What the transparency log costs: per append, per proof, per checkpoint, in one run.

Run:  python benchmarks/tlog_cost.py [--entries 20000]

Prints, on this machine:

- the CPU an append spends per entry on sealing alone (JCS bytes, SHA-256, Ed25519) and
  on the tree (the leaf hash and the frontier's new hashes), side by side, and the ratio;
- the Redis bytes the tree keeps per entry (32-byte hashes, about two per entry);
- the time of an inclusion proof, a consistency proof and a signed checkpoint against a
  private redis-server holding a table of ``--entries`` entries (the proofs' round trip
  to Redis included; the HTTP layer's cost is the harness's business).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from redis.asyncio import Redis

from fairroll.audit import AuditStore, Draft, Signer, merkle
from fairroll.audit.entry import Head, canonical, leaf_hash
from fairroll.audit.signing import seal
from fairroll.randomness import SeededDice
from fairroll.redis_server import RedisServer, free_port
from fairroll.rules.tft import Contest, Contestant, resolve_contest


def draft(table: str, seed: str) -> Draft:
    contest = Contest(a=Contestant(attribute=16, talents=2), b=Contestant(attribute=12))
    dice = SeededDice(seed)
    outcome = resolve_contest(contest, dice)
    return Draft(
        table=table,
        mechanic="tft.contest",
        request=contest,
        source="chosen",
        seed=seed,
        dice=dice.dice,
        outcome=outcome,
    )


def cpu_per_entry(count: int = 5000) -> tuple[float, float]:
    """(µs sealing an entry, µs more for its tree), best of 3."""
    signer = Signer.generate()
    drafts = [draft("t", f"s{i}") for i in range(count)]
    seal_best = tree_best = float("inf")
    for _ in range(3):
        head = Head.empty()
        started = time.perf_counter()
        entries = []
        for item in drafts:
            entry = seal(item, head, signer, "2026-12-01T00:00:00.000Z")
            entries.append(canonical(entry))
            head = Head(entry.seq, entry.entry_hash)
        seal_best = min(seal_best, (time.perf_counter() - started) / count)
        frontier = merkle.Frontier.empty()
        started = time.perf_counter()
        for data in entries:
            frontier, stored = frontier.append(leaf_hash(data))
            b"".join(stored)
        tree_best = min(tree_best, (time.perf_counter() - started) / count)
    return seal_best * 1e6, tree_best * 1e6


async def against_redis(url: str, entries: int) -> dict[str, float]:
    redis = Redis.from_url(url)
    store = AuditStore(redis, Signer.generate(), allow_unsafe=True)
    table = "bench"
    try:
        for start in range(0, entries, 256):
            await asyncio.gather(
                *(store.append(draft(table, f"s{i}")) for i in range(start, start + 256))
            )
        tree_bytes = await redis.strlen(f"fairroll:{{{table}}}:tree")
        timings: dict[str, list[float]] = {"inclusion": [], "consistency": [], "checkpoint": []}
        for i in range(200):
            seq = 1 + (i * 7919) % entries
            started = time.perf_counter()
            await store.inclusion_proof(table, seq, entries)
            timings["inclusion"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await store.consistency_proof(table, max(1, seq - 1), entries)
            timings["consistency"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await store.checkpoint(table)
            timings["checkpoint"].append(time.perf_counter() - started)
        result = {f"{k} p50 ms": statistics.median(v) * 1e3 for k, v in timings.items()}
        result["tree bytes per entry"] = tree_bytes / entries
        return result
    finally:
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000)
    args = parser.parse_args()
    sealing, tree = cpu_per_entry()
    print(f"per entry: sealing {sealing:.1f} µs, tree {tree:.1f} µs more ({tree / sealing:.0%})")
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp), port=free_port()).start()
        try:
            figures = asyncio.run(against_redis(server.url, args.entries))
        finally:
            server.stop()
    print(f"a table of {args.entries} entries:")
    for name, value in figures.items():
        print(f"  {name}: {value:.2f}")


if __name__ == "__main__":
    main()
