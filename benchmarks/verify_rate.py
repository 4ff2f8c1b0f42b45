"""How fast a log is verified, against how fast one server process writes it, in one run.

Run:  python benchmarks/verify_rate.py [--seconds 10] [--connections 32] [--scenario tft]

Starts a private redis-server and fairroll (``fairroll serve``, one process, as
``benchmarks/harness.py`` does), drives rolls onto one table with wrk for ``--seconds``
(the write rate: rolls acknowledged per second, each durable and signed), exports the
table, then times, on that export in this process:

- ``fairroll verify`` as a player runs it (chain, hashes, seeds, the rules replayed, the
  Merkle root) with the table's checkpoint standing in for the entries' signatures, on
  every core and on one (``--workers 1``); without the checkpoint (every entry's
  signature checked); and with ``--no-replay``;
- ``GET /v1/tables/{table}/verification`` on the server, asked again while it answers
  202 (incremental: each answer goes on from the last), to the head: how many parts,
  how long in all.

It prints entries per second of each (the best of three runs) and the ratio to the
write rate measured in the same run (the target: a verifier at least ten times the rate
one process writes). ``--online-only`` skips the offline runs, for a long log.

``--hour``: the auditor's check of a one-hour table. It measures one process's write
rate (FBC rolls from wrk over ``--tables`` tables, ``--seconds``), builds one table of
that rate times an hour of entries (``--entries`` fewer, on a machine without the time)
in this process, through the store with the server's key (``growth.build_tables``),
exports it from the server, and then times ``fairroll verify --keys K --root R export``
(the auditor's default: every entry's signature, the rules replayed, on every core) as a
process of its own, its start-up included. ``--export DIR`` skips the writing and the
building: it verifies the export ``growth.py --keep DIR`` kept, against the write
rate it measures first (or ``--write-rate``). Beside the rates it prints the CPU the
writer spent per roll and the verifier per entry (its worker processes included): on
a machine others load, the ratio of those is the steadier figure. ``--profile FILE``
runs that verify under ``py-spy record`` (its worker processes too) and writes the raw
stacks there.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import uvloop

from fairroll.cli import main as fairroll_main
from fairroll.redis_server import RedisServer, free_port
from growth import build_tables, keep
from harness import LUA, SCENARIOS, stop, wrk
from scale_out import cpu_seconds, serve, settle


def timed_verify(export: Path, root: str, *extra: str, runs: int = 3) -> tuple[float, str]:
    """The fewest seconds ``fairroll verify`` took on ``export`` in this process in
    ``runs`` runs (the machine's noise is one-sided), and its first line."""
    best = float("inf")
    for _ in range(runs):
        out = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out):
            status = fairroll_main(["verify", str(export), "--root", root, *extra])
        best = min(best, time.perf_counter() - started)
        if status != 0:
            raise RuntimeError(out.getvalue())
    first = out.getvalue().splitlines()[0] if out.getvalue() else ""
    return best, first


#: FAIRROLL_COMPUTE_TIMEOUT's default, which the server runs with.
LIMIT = 5.0


def ask_until_complete(client: httpx.Client) -> tuple[httpx.Response, list[int], list[float]]:
    """Ask for the table's verification while it answers 202 (incremental: each answer
    goes on from the last): the last answer, every status, every answer's seconds."""
    statuses: list[int] = []
    times: list[float] = []
    while len(statuses) < 10_000:
        asked = time.perf_counter()
        online = client.get("/v1/tables/bench-1/verification")
        times.append(time.perf_counter() - asked)
        statuses.append(online.status_code)
        if online.status_code != 202:
            break
    return online, statuses, times


def hour_table(args: argparse.Namespace, folder: Path | None) -> tuple[float, float]:
    """Measure the write rate, build a table of an hour of it and keep its export in
    ``folder`` (``growth.keep``; no ``folder``: measure only); the write rate and the
    server's CPU seconds per roll."""
    seed = base64.b64encode(os.urandom(32)).decode()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with RedisServer(tmp / "redis", port=free_port()) as redis:
            server, base = serve(redis.url, seed, tmp / "fairroll.log")
            try:
                path, body = SCENARIOS["fbc"]
                script = tmp / "roll.lua"
                script.write_text(LUA % {"tables": args.tables, "body": body})
                settle(server.pid, 1)
                wrk(base + path, script, 2, args.connections)  # warm-up
                pids = settle(server.pid, 1)
                cpu = cpu_seconds(pids)
                rate, _, p99, _, _, _ = wrk(base + path, script, args.seconds, args.connections)
                cpu = (cpu_seconds(pids) - cpu) / (rate * args.seconds)
                entries = int(rate * 3600)
                print(
                    f"write: {rate:,.0f} rolls/s (FBC over {args.tables} tables, "
                    f"{args.connections} connections, p99 {p99:.1f} ms; the server's CPU "
                    f"{cpu * 1e6:,.0f} µs a roll): an hour is {entries:,} entries",
                    flush=True,
                )
                if folder is None:
                    return rate, cpu
                if args.entries:
                    entries = min(entries, args.entries)
                took = uvloop.run(build_tables(redis.url, seed, {"hour": entries}))
                print(f"built {entries:,} entries in {took:.0f} s", flush=True)
                keep(base, "hour", folder)
            finally:
                stop(server)
    return rate, cpu


def auditor(folder: Path, rate: float, write_cpu: float | None, profile: Path | None) -> None:
    """Time ``fairroll verify --keys K --root R export`` as its own process, and count
    the CPU it and its worker processes spent (``RUSAGE_CHILDREN``: a verifier's cost
    per entry beside the writer's per roll, which a loaded machine's share leaves
    alone)."""
    export = folder / "export.ndjson"
    root = (folder / "root.txt").read_text().strip()
    command = [
        sys.executable, "-m", "fairroll.cli", "verify",
        "--keys", str(folder / "keys.json"), "--root", root, str(export),
    ]  # fmt: skip
    if profile is not None:
        command = [
            "py-spy", "record", "--subprocesses", "--format", "raw", "--rate", "50",
            "-o", str(profile), "--", *command,
        ]  # fmt: skip
    entries = 0
    with export.open("rb") as lines:
        for _ in lines:
            entries += 1
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
    said = done.stdout.splitlines()
    print(f"fairroll verify exited {done.returncode}: {said[0] if said else done.stderr[-500:]}")
    print(
        f"{entries:,} entries in {seconds:.1f} s, start-up included: {entries / seconds:,.0f} "
        f"entries/s, x{entries / seconds / rate:.2f} the write rate ({rate:,.0f} rolls/s); "
        f"cores: {os.cpu_count()}{', under py-spy' if profile else ''}"
    )
    print(f"verify's CPU (its workers' included): {cpu / entries * 1e6:,.0f} µs an entry")
    if write_cpu is not None:
        print(
            f"the writer's CPU: {write_cpu * 1e6:,.0f} µs a roll: a verifier with as much CPU "
            f"as one worker checks x{write_cpu / (cpu / entries):.2f} the rate it writes"
        )


def one_hour(args: argparse.Namespace) -> None:
    """``--hour``: a kept export (``--export``), or a table built here, verified."""
    if args.export is not None:
        if args.write_rate is not None:
            auditor(args.export, args.write_rate, None, args.profile)
            return
        rate, cpu = hour_table(args, None)
        auditor(args.export, rate, cpu, args.profile)
        return
    with tempfile.TemporaryDirectory() as name:
        rate, cpu = hour_table(args, Path(name))
        auditor(Path(name), rate, cpu, args.profile)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--scenario", default="tft", choices=["tft", "fbc", "tribute"])
    parser.add_argument(
        "--online-only",
        action="store_true",
        help="time only GET .../verification (a long log: its parts and their answers)",
    )
    parser.add_argument(
        "--keep", type=Path, help="copy the export and the root key id into this directory"
    )
    parser.add_argument("--hour", action="store_true", help="the auditor on a one-hour table")
    parser.add_argument("--tables", type=int, default=1000, help="(--hour) the write rate's")
    parser.add_argument("--entries", type=int, help="(--hour) at most this many entries")
    parser.add_argument("--export", type=Path, help="(--hour) verify this kept export")
    parser.add_argument(
        "--write-rate", type=float, help="(--export) to compare with (else measured first)"
    )
    parser.add_argument("--profile", type=Path, help="(--hour) py-spy's raw stacks here")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    if args.hour:
        one_hour(args)
        return
    path, body = SCENARIOS[args.scenario]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with RedisServer(tmp / "redis", port=free_port()) as redis:
            server, base = serve(redis.url, None, tmp / "fairroll.log")
            try:
                script = tmp / "roll.lua"
                script.write_text(LUA % {"tables": 1, "body": body})
                rate, _, p99, _, non2xx, errors = wrk(
                    base + path, script, args.seconds, args.connections
                )
                with httpx.Client(base_url=base, timeout=120) as client:
                    export = tmp / "export.ndjson"
                    export.write_bytes(client.get("/v1/tables/bench-1/export").content)
                    root = client.get("/v1/keys").json()["root"]
                    checkpoint = tmp / "checkpoint.json"
                    checkpoint.write_bytes(client.get("/v1/tables/bench-1/checkpoint").content)
                    online = ask_until_complete(client)
            finally:
                stop(server)
        entries = sum(1 for line in export.read_bytes().splitlines() if line.strip())
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "export.ndjson").write_bytes(export.read_bytes())
            (args.keep / "root.txt").write_text(root + "\n")
            (args.keep / "checkpoint.json").write_bytes(checkpoint.read_bytes())
        covered = ("--checkpoint", str(checkpoint))
        runs = (
            {}
            if args.online_only
            else {
                "fairroll verify --checkpoint (all cores)": timed_verify(export, root, *covered),
                "the same, --workers 1": timed_verify(export, root, *covered, "--workers", "1"),
                "without --checkpoint (every signature)": timed_verify(export, root),
                "the same, --workers 1 ": timed_verify(export, root, "--workers", "1"),
                "--checkpoint --no-replay": timed_verify(export, root, *covered, "--no-replay"),
            }
        )
    print(
        f"write: {rate:,.0f} rolls/s ({args.scenario}, {args.connections} connections, "
        f"p99 {p99:.1f} ms, non-2xx {non2xx}, socket errors {errors}); {entries:,} entries"
    )
    print(f"cores: {os.cpu_count()}")
    for name, (seconds, _) in runs.items():
        print(
            f"{name.strip():40} {entries / seconds:>8,.0f} entries/s "
            f"({seconds:.2f} s), x{entries / seconds / rate:.2f} the write rate"
        )
    last, statuses, times = online
    print(
        f"GET .../verification: HTTP {last.status_code} (ok {last.json().get('ok')}) "
        f"after {statuses.count(202)} part(s) answered 202 and {statuses.count(503)} 503, "
        f"{sum(times):.2f} s in all ({entries / sum(times):,.0f} entries/s); slowest "
        f"answer {max(times):.2f} s (the calculation limit: {LIMIT} s)"
    )
    if runs:
        print(f"verify said: {next(iter(runs.values()))[1]}")


if __name__ == "__main__":
    main()
