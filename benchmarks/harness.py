"""fairroll against the ceiling of its own stack, side by side, in one run.

Run:  python benchmarks/harness.py [--seconds 10] [--connections 1,32,128]
                                   [--scenarios tft,fbc,tribute,odds] [--workers 1]

Starts a private redis-server, fairroll (``fairroll serve``: granian, one worker
process, uvloop, production settings: no rate limit, a real signing key), and the
ceiling: a bare Litestar app returning a fixed small JSON body, served by the same
function on the same server. wrk (Debian package ``wrk``) drives each on loopback
for a fixed duration at each connection count; a Lua ``done`` hook prints the
exact latency percentiles (p50, p99, p99.9) from wrk's own histogram.

Rolls spread over ``--tables`` tables (a deployment serves many tables; one
table's chain is a serial resource, see docs/performance.md), each roll with
its audit append: fairroll answers only after Redis holds the signed entry.

wrk runs with one thread: on this 2-core machine that leaves a core to the
server, and one wrk thread drives the ceiling well past fairroll's rate, so the
load generator is not what limits fairroll (the ceiling row shows its reach).
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from fairroll.redis_server import RedisServer, free_port

HERE = Path(__file__).resolve().parent

#: scenario -> (path, JSON body template; {table} is filled per request)
SCENARIOS = {
    "ceiling": ("/ceiling", '{"a":{"attribute":16,"talents":2},"b":{"attribute":12}}'),
    "ceiling-body": ("/ceiling/body", '{"table":"bench-1","pool":10,"risk":5}'),
    "tft": (
        "/v1/tft/contests",
        (
            '{"table":"%s","a":{"attribute":16,"talents":2},"b":{"attribute":12},'
            '"victory_levels":true}'
        ),
    ),
    "fbc": ("/v1/fbc/rolls", '{"table":"%s","pool":10,"risk":5}'),
    "tribute": (
        "/v1/tribute/tests",
        ('{"table":"%s","reality":"d12","rank":0,"focus":6,"burden":6,"difficulty":0}'),
    ),
    "odds": (
        "/v1/tribute/tests/odds",
        '{"reality":"d12","rank":0,"focus":6,"burden":6,"difficulty":0}',
    ),
}

LUA = """
local bodies = {}
local tables = %(tables)d
for i = 1, tables do
  local body = [==[%(body)s]==]
  if string.find(body, "%%%%s") then body = string.format(body, "bench-" .. i) end
  bodies[i] = body
end
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"},
                    bodies[(counter %% tables) + 1])
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %%d %%d %%d %%d %%d %%d %%d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


@dataclass(frozen=True)
class Result:
    scenario: str
    connections: int
    rps: float
    p50_ms: float
    p99_ms: float
    p999_ms: float
    non2xx: int
    socket_errors: int


def wrk(url: str, script: Path, seconds: int, connections: int) -> tuple[float, ...]:
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            "--timeout",
            "10s",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)", out)
    if match is None:
        raise RuntimeError(out)
    requests, micros, p50, p99, p999, non2xx, errors = (int(x) for x in match.groups())
    return requests / (micros / 1e6), p50 / 1e3, p99 / 1e3, p999 / 1e3, non2xx, errors


def start(args: list[str], env: dict[str, str], log: Path, url: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(args, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            if httpx.get(url).status_code < 500:
                return process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(log.read_text())


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()


def measure(
    base: str, scenarios: list[str], connections: list[int], seconds: int, tables: int, tmp: Path
) -> list[Result]:
    results = []
    for scenario in scenarios:
        path, body = SCENARIOS[scenario]
        script = tmp / f"{scenario}.lua"
        script.write_text(LUA % {"tables": tables if "%s" in body else 1, "body": body})
        wrk(base + path, script, 2, 32)  # warm-up: imports, caches, connections
        for count in connections:
            rps, p50, p99, p999, non2xx, errors = wrk(base + path, script, seconds, count)
            results.append(Result(scenario, count, rps, p50, p99, p999, int(non2xx), int(errors)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", default="1,32,128")
    parser.add_argument("--scenarios", default="tft,fbc,tribute,odds")
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", default="granian", choices=["granian", "uvicorn"])
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (apt-get install wrk)")
    connections = [int(c) for c in args.connections.split(",")]
    scenarios = args.scenarios.split(",")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with RedisServer(tmp / "redis", port=free_port()) as redis:
            env = {
                **os.environ,
                "REDIS_URL": redis.url,
                "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
                "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
            }
            port = free_port()
            ceiling = start(
                [
                    sys.executable,
                    "-c",
                    (
                        "from fairroll.cli import run_server; "
                        f"run_server('ceiling:create_app', '127.0.0.1', {port}, "
                        f"'{args.server}', {args.workers})"
                    ),
                ],
                env,
                tmp / "ceiling.log",
                f"http://127.0.0.1:{port}/ceiling",
            )
            try:
                results = measure(
                    f"http://127.0.0.1:{port}",
                    ["ceiling", "ceiling-body"],
                    connections,
                    args.seconds,
                    1,
                    tmp,
                )
            finally:
                stop(ceiling)
            port = free_port()
            fairroll = start(
                [
                    sys.executable,
                    "-m",
                    "fairroll.cli",
                    "serve",
                    "--port",
                    str(port),
                    "--server",
                    args.server,
                    "--workers",
                    str(args.workers),
                ],
                env,
                tmp / "fairroll.log",
                f"http://127.0.0.1:{port}/livez",
            )
            try:
                results += measure(
                    f"http://127.0.0.1:{port}",
                    scenarios,
                    connections,
                    args.seconds,
                    args.tables,
                    tmp,
                )
            finally:
                stop(fairroll)
    report(results, args)


def report(results: list[Result], args: argparse.Namespace) -> None:
    ceiling = {r.connections: r.rps for r in results if r.scenario == "ceiling"}
    reading = {r.connections: r.rps for r in results if r.scenario == "ceiling-body"}
    print(
        f"{args.server}, {args.workers} worker(s), wrk -t1, {args.seconds}s per row, "
        f"rolls over {args.tables} tables; latencies in ms"
    )
    print(
        f"{'scenario':<12} {'conns':>5} {'req/s':>8} {'p50':>7} {'p99':>7} {'p99.9':>7} "
        f"{'/ceiling':>8} {'/body':>6} {'non-2xx':>7} {'errors':>6}"
    )
    for r in results:
        ratio = r.rps / ceiling[r.connections]
        body = r.rps / reading[r.connections]
        print(
            f"{r.scenario:<12} {r.connections:>5} {r.rps:>8.0f} {r.p50_ms:>7.2f} "
            f"{r.p99_ms:>7.2f} {r.p999_ms:>7.2f} {ratio:>8.2f} {body:>6.2f} {r.non2xx:>7} "
            f"{r.socket_errors:>6}"
        )
    print("/ceiling: the bare route that reads no body; /body: the one that decodes it")


if __name__ == "__main__":
    main()
