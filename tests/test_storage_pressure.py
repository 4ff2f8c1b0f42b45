"""Storage under pressure: as Redis nears its ``maxmemory``, rolls are refused with a
clear 503 (``storage-full``) before the append writes anything, so no write fails
half-way; ``/readyz`` says why; nothing acknowledged is lost; ``fairroll archive``
moves old entries out, rolls resume, and the archived part and the live tail verify
end to end (offline with the base, and on the server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from fairroll.audit import Trust, verify_entries
from fairroll.audit.keyspace import log_key
from fairroll.mechanics import replay_entry
from fairroll.redis_server import RedisServer, free_port
from support import TEST_SIGNING_KEY, LiveServer

BODY = {"pool": 6, "risk": 2}
CLI = (sys.executable, "-m", "fairroll.cli")
HEADROOM = 1_500_000  # bytes of maxmemory above what Redis holds at the start


@pytest.fixture
def small(tmp_path: Path) -> Iterator[tuple[RedisServer, LiveServer]]:
    with RedisServer(tmp_path / "redis", port=free_port()) as redis:
        server = LiveServer(redis.url, tmp_path / "fairroll.log")
        try:
            yield redis, server
        finally:
            server.stop()


def test_a_full_store_refuses_before_writing_and_archive_makes_room(
    small: tuple[RedisServer, LiveServer], tmp_path: Path
) -> None:
    redis, server = small
    table = "full-" + os.urandom(4).hex()
    with Redis.from_url(redis.url) as client, httpx.Client(base_url=server.url, timeout=10) as http:
        assert http.post("/v1/fbc/rolls", json={**BODY, "table": table}).status_code == 200
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory", used + HEADROOM)
        client.config_set("maxmemory-policy", "noeviction")
        acked: dict[int, str] = {}
        refused = None
        for n in range(20_000):
            answer = http.post(
                "/v1/fbc/rolls",
                json={**BODY, "table": table},
                headers={"Idempotency-Key": f"roll-{n}"},
            )
            if answer.status_code != 200:
                refused = answer
                break
            acked[answer.json()["receipt"]["seq"]] = answer.json()["receipt"]["entry_hash"]
        assert refused is not None and refused.status_code == 503, refused
        assert refused.json()["type"].endswith("storage-full"), refused.json()
        assert "maxmemory" in refused.json()["detail"] and len(acked) > 100
        ready = http.get("/readyz")
        assert ready.status_code == 503 and "nearly full" in ready.text
        # Nothing acknowledged is lost, and no write was left half-way: the log verifies.
        export = http.get(f"/v1/tables/{table}/export").content
        entries = [json.loads(line) for line in export.splitlines()]
        held = {e["seq"]: e["entry_hash"] for e in entries}
        assert all(held.get(seq) == digest for seq, digest in acked.items())
        root = http.get("/v1/keys").json()["root"]
        report = verify_entries(
            export.splitlines(), Trust(keys=None, root=root), replay=replay_entry
        )
        assert report.ok and report.last_seq == len(entries), report
        # The operator archives the old entries: Redis has room again, rolls resume.
        through = len(entries) - 10
        out = tmp_path / "archive.ndjson"
        env = {**os.environ, "REDIS_URL": redis.url, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY}
        done = subprocess.run(
            [*CLI, "archive", table, "--through", str(through), "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert client.xlen(log_key(table)) == 10
        again = http.post("/v1/fbc/rolls", json={**BODY, "table": table})
        assert again.status_code == 200, again.text
        # The archived part and the live tail verify end to end.
        archived = verify_entries(
            out.read_bytes().splitlines(), Trust(keys=None, root=root), replay=replay_entry
        )
        assert archived.ok and archived.last_seq == through
        (tmp_path / "base.json").write_text(http.get(f"/v1/tables/{table}/base").text)
        tail = tmp_path / "tail.ndjson"
        tail.write_bytes(http.get(f"/v1/tables/{table}/export").content)
        # The key was published in the archived part: the tail takes it from GET /v1/keys.
        keys, base = tmp_path / "keys.json", tmp_path / "base.json"
        keys.write_text(http.get("/v1/keys").text)
        checked = subprocess.run(
            [*CLI, "verify", str(tail), "--root", root, "--keys", str(keys), "--base", str(base)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout
        online = http.get(f"/v1/tables/{table}/verification").json()
        assert online["ok"] and online["first_seq"] == through + 1, online
