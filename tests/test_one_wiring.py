"""One wiring from the settings (issue 41, item 1): an operator command writes to a log
with the store the server itself opens, so what it signs carries the server's log name,
key, replicas and durability. Before, ``fairroll archive`` built its own store without
``FAIRROLL_LOG_NAME``: under a configured log name the archive's base was signed as
``fairroll/<table>`` while every checkpoint of the table was ``<log name>/<table>``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from litestar.testing import TestClient

from fairroll.api.app import create_app
from fairroll.api.services import services_of
from fairroll.api.settings import Settings
from fairroll.audit import AuditStore
from fairroll.cli.operator import operator_store
from fairroll.redis_server import RedisServer
from support import TEST_SIGNING_KEY, LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
LOG_NAME = "dice.example/log"


def fairroll(env: dict[str, str], *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *map(str, args)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_archive_base_is_signed_under_the_servers_log_name_and_key(
    redis_server: RedisServer, tmp_path: Path, table: str
) -> None:
    env = {
        "REDIS_URL": redis_server.url,
        "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY,
        "FAIRROLL_LOG_NAME": LOG_NAME,
    }
    server = LiveServer(redis_server.url, tmp_path / "server.log", env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            for _ in range(3):
                rolled = client.post("/v1/tft/contests", json={**BODY, "table": table})
                assert rolled.status_code == 200, rolled.text
            checkpoint = client.get(f"/v1/tables/{table}/checkpoint").json()
            out = tmp_path / "archive.ndjson"
            done = fairroll(env, "archive", table, "--through", 2, "--out", out)
            assert done.returncode == 0, done.stdout + done.stderr
            base = json.loads(out.with_name(out.name + ".base.json").read_text())
            served = client.get(f"/v1/tables/{table}/base").json()
    finally:
        server.stop()
    assert checkpoint["origin"] == f"{LOG_NAME}/{table}"
    assert base["origin"] == served["origin"] == checkpoint["origin"]
    assert base["key_name"] == checkpoint["key_name"] == LOG_NAME
    assert base["key_id"] == checkpoint["key_id"]
    assert base["text"].startswith(f"{LOG_NAME}/{table}\n")


# Building the app in this process warns of what Litestar 3 will refuse (as in
# test_direct_routes); the servers the other tests start run the same app.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_operator_store_is_the_servers_store(
    monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer
) -> None:
    """The store an operator command opens and the one ``create_app``'s lifespan opens
    from the same environment: one log name, key, pinned root, replicas and durability."""
    for name, value in {
        "REDIS_URL": redis_server.url,
        "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY,
        "FAIRROLL_LOG_NAME": LOG_NAME,
        "FAIRROLL_DURABILITY": "memory",
        "FAIRROLL_REQUIRE_REPLICAS": "1",
    }.items():
        monkeypatch.setenv(name, value)
    opened = operator_store()
    assert isinstance(opened, AuditStore)
    with TestClient(create_app(Settings.from_env())) as client:
        served = services_of(client.app).store
        for store in (opened, served):
            assert store.log_name == LOG_NAME
            assert store.replicas == 1
            assert store.watch.allow_unsafe
        assert opened.signer.key_id == served.signer.key_id
        assert opened.root_key_id == served.root_key_id
