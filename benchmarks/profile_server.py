"""Where an audited roll's time goes: py-spy on the server's worker under wrk load.

Run: python benchmarks/profile_server.py [--seconds 15] [--scenario tft] [--connections 32]
                                         [--tables 1000]
Needs py-spy (pip) and wrk (Debian). Starts a private redis-server and fairroll
(granian, one worker), drives the scenario with wrk, records the worker with
``py-spy record --format raw`` and prints the share of samples by layer (our rules
and dice, signing, the audit store, redis-py, Litestar, our middleware, the
event loop / server) and the functions with the most samples of their own.
Writes the raw collapsed stacks beside the output path (``--out``) for flame graphs.
"""

from __future__ import annotations

import argparse
import base64
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fairroll.redis_server import RedisServer, free_port
from harness import SCENARIOS, script_text, start, stop
from soak import children

#: layer -> path fragments of frames that belong to it (first match wins, innermost frame)
LAYERS = {
    "dice (HMAC)": ("fairroll/randomness.py", "hmac.py"),
    "rules": ("fairroll/rules/", "fairroll/mechanics/"),
    "sign + hash entry": ("fairroll/audit/signing.py", "fairroll/audit/entry.py"),
    "checkpoint": ("fairroll/audit/checkpoint.py", "fairroll/audit/note.py"),
    "merkle": ("fairroll/audit/merkle.py",),
    "durability": ("fairroll/audit/redis/durability.py",),
    "seed sessions": ("fairroll/audit/sessions.py", "fairroll/play/sessions.py", "fairroll/chain"),
    "audit store": ("fairroll/audit/", "zlib"),
    "redis-py": ("redis/",),
    "fairroll api": ("fairroll/api/",),
    "litestar": ("litestar/",),
    "msgspec": ("msgspec/",),
    "prometheus": ("prometheus_client/",),
    "asyncio / loop / server": ("asyncio/", "granian/", "uvloop/"),
}


def layer_of(frames: list[str]) -> str:
    for frame in reversed(frames):
        for layer, fragments in LAYERS.items():
            if any(fragment in frame for fragment in fragments):
                return layer
    return "other (native, idle)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--scenario", default="tft", choices=sorted(SCENARIOS))
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/profile.txt"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        redis = RedisServer(tmp / "redis", port=free_port()).start()
        env = {
            **os.environ,
            "REDIS_URL": redis.url,
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_SESSION_TOKENS": "required",
        }
        port = free_port()
        server = start(
            [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)],
            env,
            tmp / "fairroll.log",
            f"http://127.0.0.1:{port}/livez",
        )
        try:
            path = SCENARIOS[args.scenario][0]
            script = tmp / "load.lua"
            script.write_text(script_text(f"http://127.0.0.1:{port}", args.scenario, args.tables))
            load = subprocess.Popen(
                [
                    "wrk",
                    "-t1",
                    f"-c{args.connections}",
                    f"-d{args.seconds + 4}s",
                    "-s",
                    str(script),
                    f"http://127.0.0.1:{port}{path}",
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            time.sleep(2)
            (worker,) = children(server.pid)
            subprocess.run(
                [
                    "py-spy",
                    "record",
                    "--pid",
                    str(worker),
                    "--duration",
                    str(args.seconds),
                    "--rate",
                    "250",
                    "--format",
                    "raw",
                    "--output",
                    str(args.out),
                    "--nonblocking",
                ],
                check=True,
                capture_output=True,
            )
            out = load.communicate()[0]
        finally:
            stop(server)
            redis.stop()
    layers: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in args.out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        samples = int(count)
        total += samples
        layers[layer_of(frames)] += samples
        own[frames[-1]] += samples
    print(f"{args.scenario}, {args.connections} connections: {out.strip().splitlines()[-1]}")
    print(f"{total} samples of the worker process; share by layer (innermost frame):")
    for layer, samples in layers.most_common():
        print(f"  {100 * samples / total:5.1f}%  {layer}")
    print("functions with the most samples of their own:")
    for frame, samples in own.most_common(15):
        print(f"  {100 * samples / total:5.1f}%  {frame[:100]}")


if __name__ == "__main__":
    main()
