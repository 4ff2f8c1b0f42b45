"""Rolls and /livez while the costliest accepted odds requests run, against idle.

Run:  python benchmarks/odds_load.py [--seconds 10] [--heavy 4] [--connections 8]

Starts a private redis-server and fairroll (granian, one worker, one compute worker:
the defaults), then measures an audited TFT roll with wrk at ``--connections``
connections twice in the same run: idle, and while a second wrk keeps ``--heavy``
connections sending, back to back, the costliest accepted input of each heavy odds
operation in turn (the list below, each the worst the benchmarks found).
Meanwhile /livez is timed once every 100 ms. It prints the roll p50/p99 of both
runs, their ratio, the /livez percentiles, and what each heavy operation answered.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from fairroll.redis_server import RedisServer, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import LUA, SCENARIOS, start, stop, wrk

_HEAVY_FIGHTER = {
    "st": 10,
    "qk": 10,
    "in": 10,
    "ma": 10,
    "mr": 10,
    "max_hp": 999,
    "weapon": {"name": "W", "af": 20},
    "armor": {"name": "A", "frw": 20, "frm": 20},
}
_SHEET = {"name": "Hero", "st": 99, "qk": 10, "in": 0, "ma": 10, "mr": 10, "max_hp": 10}

#: The costliest accepted input of each heavy odds operation (path, body).
HEAVY = [
    (
        "/v1/fast-battle/battles/odds",
        {
            "fighters": [{"name": "A", **_HEAVY_FIGHTER}, {"name": "B", **_HEAVY_FIGHTER}],
            "max_turns": 500,
        },
    ),
    # 99 levels of ST 99 (9,801 HP flips): the level-up odds' costliest input.
    ("/v1/fast-battle/level-ups/odds", {"character": {**_SHEET, "level": 1}, "xp_gained": "297"}),
    ("/v1/fbc/rolls/odds", {"pool": 999, "risk": 30}),
    (
        "/v1/tribute/tests/odds",
        {"reality": "d12", "rank": 0, "focus": 6, "burden": 6, "difficulty": 0},
    ),
]


HEAVY_LUA = """
local requests = {%(requests)s}
local n = 0
request = function()
  n = n + 1
  local r = requests[(n %% #requests) + 1]
  return wrk.format("POST", r[1], {["Content-Type"] = "application/json"}, r[2])
end
done = function(summary, latency, requests)
  io.write(string.format("heavy requests %%d non-2xx %%d\\n", summary.requests,
    summary.errors.status))
end
"""


def _lua_requests() -> str:
    return ", ".join(f"{{[==[{p}]==], [==[{json.dumps(b)}]==]}}" for p, b in HEAVY)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--heavy", type=int, default=4)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
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
                run(base, tmp, args)
            finally:
                stop(server)


def run(base: str, tmp: Path, args: argparse.Namespace) -> None:
    path, body = SCENARIOS["tft"]
    script = tmp / "tft.lua"
    script.write_text(LUA % {"tables": 1000, "body": body})
    wrk(base + path, script, 2, args.connections)  # warm-up
    for heavy_path, heavy_body in HEAVY:  # each heavy input once, to see what it answers
        started = time.perf_counter()
        answer = httpx.post(base + heavy_path, json=heavy_body, timeout=30)
        print(
            f"{heavy_path:<32} {answer.status_code} {len(answer.content):>9,} bytes "
            f"{(time.perf_counter() - started) * 1e3:8.1f} ms"
        )
    idle = wrk(base + path, script, args.seconds, args.connections)
    stop_event = threading.Event()
    livez: list[float] = []

    def probe() -> None:
        with httpx.Client(base_url=base, timeout=30) as client:
            while not stop_event.is_set():
                started = time.perf_counter()
                client.get("/livez")
                livez.append((time.perf_counter() - started) * 1e3)
                time.sleep(0.1)

    # The heavy load is a second wrk (C, one thread, --heavy connections) cycling through
    # the costliest inputs: a Python client would spend a core of its own reading 2.5 MB
    # answers, on the same two cores as the server.
    heavy_script = tmp / "heavy.lua"
    heavy_script.write_text(HEAVY_LUA % {"requests": _lua_requests()})
    duration = f"-d{args.seconds + 3}s"
    heavy = subprocess.Popen(
        [
            "wrk",
            "-t1",
            f"-c{args.heavy}",
            duration,
            "--timeout",
            "30s",
            "-s",
            str(heavy_script),
            base,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    prober = threading.Thread(target=probe)
    prober.start()
    try:
        time.sleep(1.0)
        loaded = wrk(base + path, script, args.seconds, args.connections)
    finally:
        stop_event.set()
        prober.join()
        heavy_out, _ = heavy.communicate(timeout=60)
    livez.sort()
    print(f"roll at {args.connections} connections, {args.seconds} s each (ms):")
    print(f"  idle        p50 {idle[1]:6.2f}  p99 {idle[2]:6.2f}  {idle[0]:7.0f} req/s")
    print(
        f"  heavy x{args.heavy}    p50 {loaded[1]:6.2f}  p99 {loaded[2]:6.2f}  "
        f"{loaded[0]:7.0f} req/s"
    )
    print(f"  p99 ratio (heavy / idle): {loaded[2] / idle[2]:.2f}")
    print(
        f"/livez under heavy load: p50 {livez[len(livez) // 2]:.1f} ms, "
        f"max {livez[-1]:.1f} ms over {len(livez)} probes"
    )
    print("heavy load:", " ".join(heavy_out.split()[-12:]))


if __name__ == "__main__":
    main()
