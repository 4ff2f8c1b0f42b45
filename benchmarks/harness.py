"""fairroll against the ceiling of its own stack, side by side, in one run.

Run:  python benchmarks/harness.py [--seconds 10] [--connections 1,32,128]
                                   [--scenarios tft,fbc,tribute,odds,chain] [--workers 1]
      python benchmarks/harness.py --ab BASE [--rounds 3] [--scenarios chain:200,fbc:1000]

A scenario written ``name:N`` spreads its rolls over N tables (else ``--tables``).

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

``chain`` is the fair default: each of ``--tables`` tables has one hash-chain seed
session (opened before the load, ``POST /v1/tables/{table}/seeds``), and every roll
on a table rolls in its session with the session's token (``Fairroll-Session-Token``)
and no nonce (the server takes the next; a used-up chain is renewed by the roll).

``--ab BASE`` alternates two servers in one run: the code at git revision BASE
(checked out in a temporary ``git worktree``, its ``service/`` first on the path) and
this checkout's, ``--rounds`` times (base, then this), each against a fresh Redis
(flushed) after the body ceiling of that round. It prints every figure and, per
scenario and connection count, this / base for req/s, each run's ratio to the body
ceiling measured in its round, and the p99s.

Beside req/s every row has the CPU per request of the server's processes and of
Redis (``/proc``, over the run). On a host whose cores others share, req/s swings with
their load; CPU per request moves far less, so A/B verdicts read it, and the body
ceiling's CPU per request over a roll's says what ratio a server with a core to
itself would reach.
"""

from __future__ import annotations

import argparse
import base64
import json
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
from redis import Redis

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
    # Each table's body is filled from its session (``chain_lua``).
    "chain": ("/v1/fbc/rolls", ""),
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


CHAIN_LUA = """
local bodies = {
%(bodies)s
}
local counter = 0
request = function()
  counter = counter + 1
  local one = bodies[(counter %% #bodies) + 1]
  return wrk.format("POST", nil, {["Content-Type"] = "application/json",
                    ["Fairroll-Session-Token"] = one[1]}, one[2])
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %%d %%d %%d %%d %%d %%d %%d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


def chain_lua(base: str, tables: int) -> str:
    """The ``chain`` scenario's wrk script: a hash-chain session opened on each of
    ``tables`` fresh tables, each table's roll in its session, sent with its token."""
    prefix = f"chain-{os.urandom(3).hex()}"
    rows = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for i in range(1, tables + 1):
            table = f"{prefix}-{i}"
            answer = client.post(f"/v1/tables/{table}/seeds", json={})
            answer.raise_for_status()
            made = answer.json()
            body = json.dumps(
                {
                    "table": table,
                    "pool": 10,
                    "risk": 5,
                    "session": {"seed_id": made["seed_id"], "client_seed": os.urandom(16).hex()},
                },
                separators=(",", ":"),
            )
            rows.append(f'  {{"{made["token"]}", [==[{body}]==]}},')
    return CHAIN_LUA % {"bodies": "\n".join(rows)}


def script_text(base: str, scenario: str, tables: int) -> str:
    """The wrk script of ``scenario``, its rolls spread over ``tables`` tables."""
    if scenario == "chain":
        return chain_lua(base, tables)
    body = SCENARIOS[scenario][1]
    return LUA % {"tables": tables if "%s" in body else 1, "body": body}


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
    #: CPU per request (µs) of the server's processes and of Redis: on a shared host
    #: these move far less with the neighbours' load than req/s does.
    server_cpu_us: float = float("nan")
    redis_cpu_us: float = float("nan")


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


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of ``pid`` and every process below it so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except FileNotFoundError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(child) for child in children(pid))


def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return []
    return [int(child) for child in found]


def measure(
    base: str,
    scenarios: list[str],
    connections: list[int],
    seconds: int,
    tables: int,
    tmp: Path,
    pids: tuple[int, int] | None = None,
) -> list[Result]:
    """Each scenario at each connection count; ``pids`` (the server's, Redis's): also
    their CPU per request."""
    results = []
    for named in scenarios:
        # ``fbc:1000``: this scenario over its own number of tables
        scenario, _, spread = named.partition(":")
        path = SCENARIOS[scenario][0]
        script = tmp / f"{scenario}.lua"
        script.write_text(script_text(base, scenario, int(spread or tables)))
        wrk(base + path, script, 2, 32)  # warm-up: imports, caches, connections
        for count in connections:
            used = [cpu_seconds(pid) for pid in pids or ()]
            rps, p50, p99, p999, non2xx, errors = wrk(base + path, script, seconds, count)
            done = rps * seconds
            cpu = [(cpu_seconds(p) - u) * 1e6 / done for p, u in zip(pids or (), used, strict=True)]
            results.append(
                Result(named, count, rps, p50, p99, p999, int(non2xx), int(errors), *cpu)
            )
    return results


def run_ceiling(
    env: dict[str, str], args: argparse.Namespace, tmp: Path, redis_pid: int | None = None
) -> list[Result]:
    """The two ceilings: a bare Litestar app on the same server as fairroll."""
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
        return measure(
            f"http://127.0.0.1:{port}",
            ["ceiling", "ceiling-body"],
            args.connection_counts,
            args.seconds,
            1,
            tmp,
            None if redis_pid is None else (ceiling.pid, redis_pid),
        )
    finally:
        stop(ceiling)


def run_fairroll(
    env: dict[str, str], args: argparse.Namespace, tmp: Path, redis_pid: int | None = None
) -> list[Result]:
    """``fairroll serve`` under each scenario."""
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
        results = measure(
            f"http://127.0.0.1:{port}",
            args.scenarios.split(","),
            args.connection_counts,
            args.seconds,
            args.tables,
            tmp,
            None if redis_pid is None else (fairroll.pid, redis_pid),
        )
    finally:
        stop(fairroll)
    return results


def environment(redis_url: str, python_path: str) -> dict[str, str]:
    """The servers' environment: production settings, a fresh signing key, tokens
    required for session rolls, ``python_path`` first on the import path."""
    return {
        **os.environ,
        "REDIS_URL": redis_url,
        "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
        "FAIRROLL_SESSION_TOKENS": "required",
        # the checkout's ``service/`` in place of the first entry; the rest kept
        "PYTHONPATH": os.pathsep.join(
            [python_path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)[1:], str(HERE)]
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", default="1,32,128")
    parser.add_argument("--scenarios", default="tft,fbc,tribute,odds")
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", default="granian", choices=["granian", "uvicorn"])
    parser.add_argument("--ab", metavar="BASE", help="alternate with git revision BASE")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --ab")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (apt-get install wrk)")
    args.connection_counts = [int(c) for c in args.connections.split(",")]
    here = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or str(HERE.parent / "service")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with RedisServer(tmp / "redis", port=free_port()) as redis:
            if args.ab is None:
                results = run_ceiling(environment(redis.url, here), args, tmp, redis.pid)
                results += run_fairroll(environment(redis.url, here), args, tmp, redis.pid)
                report(results, args)
                return
            base = worktree(args.ab, tmp / "base")
            try:
                rounds = []
                for number in range(1, args.rounds + 1):
                    sides = []
                    for path in (str(base / "service"), here):
                        flush(redis.url)
                        env = environment(redis.url, path)
                        sides.append(
                            run_ceiling(env, args, tmp, redis.pid)
                            + run_fairroll(env, args, tmp, redis.pid)
                        )
                    print(f"round {number}, base ({args.ab}) then this checkout:")
                    report(sides[0] + sides[1], args)
                    rounds.append((sides[0], sides[1]))
                compare(rounds, args)
            finally:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(base)],
                    cwd=HERE,
                    check=False,
                    capture_output=True,
                )


def worktree(revision: str, path: Path) -> Path:
    """A detached checkout of ``revision`` at ``path`` (removed after the run)."""
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(path), revision],
        cwd=HERE,
        check=True,
        capture_output=True,
    )
    return path


def flush(url: str) -> None:
    """Each server starts on an empty Redis: neither rolls onto the other's logs."""
    client = Redis.from_url(url)
    try:
        client.flushall()
    finally:
        client.close()


def compare(rounds: list[tuple[list[Result], list[Result]]], args: argparse.Namespace) -> None:
    """Per scenario and connection count, each round: this / base in req/s, and each
    side's req/s, its ratio to the body ceiling measured just before it, its p99."""
    print(f"A/B against {args.ab}, {len(rounds)} rounds: this/base (base | this)")
    for scenario in args.scenarios.split(","):
        for count in args.connection_counts:
            cells = []
            for sides in rounds:
                old, new = (pick(side, scenario, count) for side in sides)
                body = [pick(side, "ceiling-body", count).rps for side in sides]
                spent = [pick(side, "ceiling-body", count).server_cpu_us for side in sides]
                cells.append(
                    f"{new.rps / old.rps:.2f} cpu {new.server_cpu_us / old.server_cpu_us:.2f} "
                    f"({old.rps:,.0f} {old.rps / body[0]:.2f} p99 {old.p99_ms:.1f} "
                    f"{old.server_cpu_us:.0f} µs {spent[0] / old.server_cpu_us:.2f} | "
                    f"{new.rps:,.0f} {new.rps / body[1]:.2f} p99 {new.p99_ms:.1f} "
                    f"{new.server_cpu_us:.0f} µs {spent[1] / new.server_cpu_us:.2f})"
                )
            print(f"  {scenario} at {count}: " + "; ".join(cells))
    print(
        "this/base in req/s, cpu: in the server's CPU per roll; each side: req/s, its ratio "
        "to its round's body ceiling, p99 ms, the server's CPU per roll, and the body "
        "ceiling's CPU per request over it (the ratio a server with a core to itself "
        "would reach)"
    )


def pick(results: list[Result], scenario: str, connections: int) -> Result:
    return next(r for r in results if r.scenario == scenario and r.connections == connections)


def report(results: list[Result], args: argparse.Namespace) -> None:
    ceiling: dict[int, float] = {}
    reading: dict[int, float] = {}
    print(
        f"{args.server}, {args.workers} worker(s), wrk -t1, {args.seconds}s per row, "
        f"rolls over {args.tables} tables; latencies in ms"
    )
    print(
        f"{'scenario':<12} {'conns':>5} {'req/s':>8} {'p50':>7} {'p99':>7} {'p99.9':>7} "
        f"{'/ceiling':>8} {'/body':>6} {'non-2xx':>7} {'errors':>6} {'cpu µs':>7} {'redis':>6}"
    )
    for r in results:  # each run against the ceilings measured last before it
        if r.scenario == "ceiling":
            ceiling[r.connections] = r.rps
        elif r.scenario == "ceiling-body":
            reading[r.connections] = r.rps
        ratio = r.rps / ceiling[r.connections]
        body = r.rps / reading.get(r.connections, float("nan"))
        print(
            f"{r.scenario:<12} {r.connections:>5} {r.rps:>8.0f} {r.p50_ms:>7.2f} "
            f"{r.p99_ms:>7.2f} {r.p999_ms:>7.2f} {ratio:>8.2f} {body:>6.2f} {r.non2xx:>7} "
            f"{r.socket_errors:>6} {r.server_cpu_us:>7.0f} {r.redis_cpu_us:>6.0f}"
        )
    print(
        "/ceiling: the bare route that reads no body; /body: the one that decodes it; "
        "cpu µs: fairroll's processes' CPU per request, redis: Redis's"
    )


if __name__ == "__main__":
    main()
