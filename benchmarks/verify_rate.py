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
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

from fairroll.cli import main as fairroll_main
from fairroll.redis_server import RedisServer, free_port
from harness import LUA, SCENARIOS, start, stop, wrk


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


def main() -> None:
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
    args = parser.parse_args()
    path, body = SCENARIOS[args.scenario]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with RedisServer(tmp / "redis", port=free_port()) as redis:
            env = {
                **os.environ,
                "REDIS_URL": redis.url,
                "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            }
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            server = start(
                [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)],
                env,
                tmp / "fairroll.log",
                f"{base}/livez",
            )
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
