"""Does the server's memory stay flat under load? A soak with RSS sampled as it runs.

Run: python benchmarks/soak.py [--minutes 5] [--connections 32] [--tables 1000]

Starts a private redis-server and ``fairroll serve`` (granian, one worker), drives
audited TFT contests over ``--tables`` tables with wrk for the whole duration, and
samples the resident set size (VmRSS) of the server's processes (the granian
supervisor and its worker) every ``--every`` seconds. Prints the samples, then
start / end / max and the growth over the second half (after warm-up).
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fairroll.redis_server import RedisServer, free_port
from harness import LUA, SCENARIOS, start, stop


def rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` and its children, in KiB."""
    total = 0
    for proc in [pid, *children(pid)]:
        try:
            status = Path(f"/proc/{proc}/status").read_text()
        except FileNotFoundError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return []
    return [int(child) for child in found]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--every", type=float, default=10)
    args = parser.parse_args()
    seconds = int(args.minutes * 60)
    with (
        tempfile.TemporaryDirectory() as name,
        RedisServer(Path(name) / "redis", port=free_port()) as redis,
    ):
        tmp = Path(name)
        env = {
            **os.environ,
            "REDIS_URL": redis.url,
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
        }
        port = free_port()
        server = start(
            [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)],
            env,
            tmp / "fairroll.log",
            f"http://127.0.0.1:{port}/livez",
        )
        path, body = SCENARIOS["tft"]
        script = tmp / "tft.lua"
        script.write_text(LUA % {"tables": args.tables, "body": body})
        load = subprocess.Popen(
            [
                "wrk",
                "-t1",
                f"-c{args.connections}",
                f"-d{seconds}s",
                "-s",
                str(script),
                f"http://127.0.0.1:{port}{path}",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        samples: list[tuple[float, int]] = []
        began = time.monotonic()
        try:
            while load.poll() is None:
                samples.append((time.monotonic() - began, rss_kib(server.pid)))
                time.sleep(args.every)
            out = load.communicate()[0]
        finally:
            stop(server)
            redis.stop()
    for at, kib in samples:
        print(f"{at:6.0f} s  RSS {kib / 1024:7.1f} MiB")
    half = [kib for at, kib in samples if at >= seconds / 2]
    start_kib, end_kib = samples[0][1], samples[-1][1]
    result = out.split()
    if result and result[0] == "RESULT":
        requests, micros, p50, p99, p999 = (int(x) for x in result[1:6])
        print(
            f"{requests} rolls in {micros / 1e6:.0f} s ({requests / (micros / 1e6):.0f}/s), "
            f"p50 {p50 / 1e3:.1f} ms, p99 {p99 / 1e3:.1f} ms, p99.9 {p999 / 1e3:.1f} ms, "
            f"non-2xx {result[6]}, socket errors {result[7]}"
        )
    print(
        f"RSS start {start_kib / 1024:.1f} MiB, end {end_kib / 1024:.1f} MiB, "
        f"max {max(k for _, k in samples) / 1024:.1f} MiB; "
        f"second half {min(half) / 1024:.1f}..{max(half) / 1024:.1f} MiB"
    )


if __name__ == "__main__":
    main()
