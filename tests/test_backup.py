"""The backup of docs/operations.md ("Backup and restore"), done as it says: a snapshot
of a running Redis (``redis-cli --rdb``), then a restore into a new Redis (load the
snapshot, turn the AOF on, fsync always), and fairroll on it: every entry the snapshot
held is there, the restored log verifies offline against the checkpoint kept before,
and the table goes on rolling. Nothing is lost that the snapshot held; what came after
it is what a player's later checkpoint proves missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis

from fairroll.redis_server import RedisServer, free_port
from support import LiveServer


def _wait_for_aof(client: redis.Redis) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        persistence = client.info("persistence")
        if persistence["aof_enabled"] and not persistence["aof_rewrite_in_progress"]:
            return
        time.sleep(0.05)
    raise AssertionError("the AOF was not written from the snapshot in time")


def test_a_snapshot_restores_into_a_new_redis_and_the_log_verifies(tmp_path: Path) -> None:
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli (Debian's redis-tools) is needed to take the snapshot")
    table = "t-backup"
    first = RedisServer(tmp_path / "first", port=free_port()).start()
    server = LiveServer(first.url, tmp_path / "first.log")
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            for _ in range(3):
                rolled = http.post("/v1/dice/rolls", json={"table": table, "formula": "3d6"})
                assert rolled.status_code == 200, rolled.text
            kept = http.get(f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"}).text
            keys = http.get("/v1/keys").json()
        # The backup: a point-in-time snapshot, taken from the running Redis.
        snapshot = tmp_path / "backup.rdb"
        subprocess.run(
            [cli, "-p", str(first.port), "--rdb", str(snapshot)],
            check=True,
            capture_output=True,
            timeout=60,
        )
    finally:
        server.stop()
        first.stop()
    shutil.rmtree(tmp_path / "first")  # the host is lost

    # The restore: the snapshot into a new Redis, then its AOF turned on, fsync always.
    data = tmp_path / "restored"
    data.mkdir()
    shutil.copy(snapshot, data / "dump.rdb")
    port = free_port()
    loading = RedisServer(data, port=port, appendonly="no", extra=["--dbfilename", "dump.rdb"])
    loading.start()
    try:
        client = redis.Redis(port=port)
        client.config_set("appendonly", "yes")
        _wait_for_aof(client)
        client.config_set("appendfsync", "always")
        client.close()
    finally:
        loading.stop()
    restored = RedisServer(data, port=port).start()  # as it runs from now on: from the AOF
    server = LiveServer(restored.url, tmp_path / "restored.log")
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            export = tmp_path / "export.ndjson"
            export.write_bytes(http.get(f"/v1/tables/{table}/export").content)
            rolled = http.post("/v1/dice/rolls", json={"table": table, "formula": "3d6"})
            assert rolled.status_code == 200, rolled.text
            assert rolled.json()["receipt"]["seq"] == 4  # it goes on where the log ends
    finally:
        server.stop()
        restored.stop()
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    (tmp_path / "kept.txt").write_text(kept)
    verified = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairroll.cli",
            "verify",
            str(export),
            "--keys",
            str(tmp_path / "keys.json"),
            "--root",
            keys["root"],
            "--since",
            str(tmp_path / "kept.txt"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK: 3 entries"), verified.stdout
