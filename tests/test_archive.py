"""Archival: old entries exported and verified, then trimmed behind a signed base, and
the log still verifies from that base, online and offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
from redis import Redis

from fairroll.redis_server import RedisServer
from support import TEST_ROOT, TEST_SIGNING_KEY, LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def fairroll(redis_url: str, *args: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REDIS_URL": redis_url, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY}
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def roll(client: httpx.Client, table: str, n: int) -> list[dict[str, object]]:
    return [
        client.post("/v1/tft/contests", json={**BODY, "table": table}).json()["receipt"]
        for _ in range(n)
    ]


def test_archive_trims_behind_a_signed_base_and_everything_still_verifies(
    redis_server: RedisServer,
    redis_client: Redis,
    client: httpx.Client,
    table: str,
    tmp_path: Path,
) -> None:
    roll(client, table, 15)
    out = tmp_path / "archive.ndjson"
    done = fairroll(redis_server.url, "archive", table, "--through", 10, "--out", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(out.read_bytes().splitlines()) == 10
    assert redis_client.xlen(f"fairroll:{{{table}}}:log") == 5
    keys = tmp_path / "keys.json"
    keys.write_text(client.get("/v1/keys").text)
    offline = fairroll(redis_server.url, "verify", out, "--keys", keys, "--root", TEST_ROOT)
    assert offline.returncode == 0 and "OK: 10 entries" in offline.stdout, offline.stdout
    base = client.get(f"/v1/tables/{table}/base").json()
    assert base["size"] == 10
    # The server verifies what is left, from the base; rolls go on after it.
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert (report["ok"], report["entries"], report["first_seq"]) == (True, 5, 11), report
    assert roll(client, table, 1)[0]["seq"] == 16
    export = client.get(f"/v1/tables/{table}/export").content
    assert json.loads(export.splitlines()[0])["seq"] == 11
    (tmp_path / "base.json").write_text(json.dumps(base))
    rest = tmp_path / "rest.ndjson"
    rest.write_bytes(export)
    checked = fairroll(
        redis_server.url,
        "verify",
        rest,
        "--keys",
        keys,
        "--base",
        tmp_path / "base.json",
        "--root",
        TEST_ROOT,
    )
    assert checked.returncode == 0, checked.stdout
    uploaded = client.post(
        "/v1/verify",
        content=export,
        headers={"content-type": "application/x-ndjson"},
        params={"base": f"{base['size']}:{base['head_hash']}"},
    ).json()
    assert (uploaded["ok"], uploaded["entries"]) == (True, 6)
    # A kept log spliced onto another base, or a rewritten first entry, is caught.
    forged = {**base, "head_hash": "ab" * 32}
    spliced = client.post(
        "/v1/verify",
        content=export,
        headers={"content-type": "application/x-ndjson"},
        params={"base": f"{forged['size']}:{forged['head_hash']}"},
    ).json()
    assert (spliced["ok"], spliced["first_bad_seq"]) == (False, 11)
    # Archiving again through a seq at or below the base is refused.
    again = fairroll(redis_server.url, "archive", table, "--through", 9, "--out", tmp_path / "x")
    assert again.returncode != 0


def test_an_anchor_that_was_archived_is_not_a_log_that_went_back(
    redis_server: RedisServer, tmp_path: Path, table: str
) -> None:
    """Server A acknowledged seq 5; B appends 6; 1..6 are archived. A's next roll meets a
    head it did not write and an anchor no longer in the stream: archived (below the
    base), not lost, so A re-chains on 6 instead of stopping the table."""
    a = LiveServer(redis_server.url, tmp_path / "a.log")
    b = LiveServer(redis_server.url, tmp_path / "b.log")
    try:
        with httpx.Client(base_url=a.url) as first, httpx.Client(base_url=b.url) as second:
            roll(first, table, 5)
            roll(second, table, 1)
            done = fairroll(
                redis_server.url, "archive", table, "--through", 6, "--out", tmp_path / "a.ndjson"
            )
            assert done.returncode == 0, done.stdout + done.stderr
            after = first.post("/v1/tft/contests", json={**BODY, "table": table})
            assert after.status_code == 200, after.text
            assert after.json()["receipt"]["seq"] == 7
            assert first.get("/readyz").json()["fenced_tables"] == 0
    finally:
        a.stop()
        b.stop()
