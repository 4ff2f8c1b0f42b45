"""`fairroll serve` with no REDIS_URL: embedded Redis, persisted data and key, clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from fairroll.redis_server import free_port

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}


def start(workdir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "FAIRROLL_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "fairroll", "serve", "--port", str(port)],
        cwd=workdir,
        env=env,
        stdout=(workdir / "serve.log").open("ab"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError((workdir / "serve.log").read_text())


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0


def redis_alive(workdir: Path) -> bool:
    pid_probe = subprocess.run(
        ["pgrep", "-f", f"unixsocket:{workdir}/.fairroll/redis/redis.sock"],
        capture_output=True,
        check=False,
    )
    return pid_probe.returncode == 0


def test_embedded_redis_keeps_the_chain_and_key_across_restarts(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start(tmp_path, port)
    try:
        first = httpx.post(f"{url}/v1/tft/contests", json=BODY).json()
    finally:
        stop(server)
    assert not redis_alive(tmp_path), "the embedded redis-server outlived fairroll"
    assert (tmp_path / ".fairroll" / "signing-key.pem").exists()

    server = start(tmp_path, port)
    try:
        second = httpx.post(f"{url}/v1/tft/contests", json=BODY).json()
        report = httpx.get(f"{url}/v1/tables/default/verification").json()
    finally:
        stop(server)
    assert second["receipt"]["seq"] == first["receipt"]["seq"] + 1
    assert second["receipt"]["key_id"] == first["receipt"]["key_id"]
    assert report["ok"] is True
    assert report["entries"] == 2
