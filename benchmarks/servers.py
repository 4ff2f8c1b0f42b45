"""Granian against uvicorn on the audited TFT contest endpoint, in one run.

Run: python benchmarks/servers.py [--seconds 10] [--connections 32]
Needs wrk (Debian package `wrk`). Starts a private redis-server, then fairroll
under each ASGI server in turn (one worker process, production settings), drives
POST /v1/tft/contests with wrk on loopback and prints requests/s and latency.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from fairroll.redis_server import RedisServer, free_port

BODY = '{"a":{"attribute":16,"talents":2},"b":{"attribute":12},"victory_levels":true}'
LUA = f"""
wrk.method = "POST"
wrk.body = '{BODY}'
wrk.headers["Content-Type"] = "application/json"
"""


def run_wrk(url: str, seconds: int, connections: int, script: Path) -> dict[str, str]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"50%\s+([\d.]+\w+)", out)
    p99 = re.search(r"99%\s+([\d.]+\w+)", out)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": rps.group(1) if rps else "?",
        "p50": p50.group(1) if p50 else "?",
        "p99": p99.group(1) if p99 else "?",
        "non2xx": errors.group(1) if errors else "0",
    }


def serve(server: str, redis_url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url}
    process = subprocess.Popen(
        [sys.executable, "-m", "fairroll", "serve", "--port", str(port), "--server", server],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/livez").status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(log.read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (apt-get install wrk)")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "post.lua"
        script.write_text(LUA)
        with RedisServer(Path(tmp) / "redis", port=free_port()) as redis:
            results = {}
            for server in ("granian", "uvicorn"):
                process, url = serve(server, redis.url, Path(tmp) / f"{server}.log")
                try:
                    run_wrk(f"{url}/v1/tft/contests", 2, args.connections, script)  # warm-up
                    results[server] = run_wrk(
                        f"{url}/v1/tft/contests", args.seconds, args.connections, script
                    )
                finally:
                    process.terminate()
                    process.wait(15)
    print(f"POST /v1/tft/contests, {args.connections} connections, {args.seconds}s, 1 worker")
    print(f"{'server':>8} {'req/s':>9} {'p50':>9} {'p99':>9} {'non-2xx':>8}")
    for server, r in results.items():
        print(f"{server:>8} {r['rps']:>9} {r['p50']:>9} {r['p99']:>9} {r['non2xx']:>8}")
    granian, uvicorn = float(results["granian"]["rps"]), float(results["uvicorn"]["rps"])
    print(f"granian / uvicorn requests/s: {granian / uvicorn:.2f}")


if __name__ == "__main__":
    main()
