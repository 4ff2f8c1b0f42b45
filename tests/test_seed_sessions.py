"""Commit-reveal seed sessions: commitment first, nonces in order, the seed only at reveal."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from conftest import LiveServer
from fairroll.audit import verify_entries
from fairroll.audit.entry import GENESIS_HASH, chain_hash
from fairroll.audit.sessions import IDLE_SECONDS, OPEN_SESSIONS, SeedSessions
from fairroll.randomness import commitment_of, committed_seed, derive_faces

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}


def start(client: httpx.Client, table: str) -> dict[str, Any]:
    response = client.post(f"/v1/tables/{table}/seeds")
    assert response.status_code == 201, response.text
    return response.json()


def roll(client: httpx.Client, table: str, seed_id: str, client_seed: str) -> httpx.Response:
    return client.post(
        "/v1/tft/contests",
        json={**BODY, "table": table, "session": {"seed_id": seed_id, "client_seed": client_seed}},
    )


def test_session_rolls_commit_first_and_reveal_last(
    client: httpx.Client, table: str, tmp_path: Path, live_server: LiveServer
) -> None:
    session = start(client, table)
    assert session["server_seed"] is None and len(session["commitment"]) == 64
    seed_id = session["seed_id"]
    seen: list[str] = [json.dumps(session)]
    bodies = [roll(client, table, seed_id, f"player-{i}").json() for i in range(3)]
    assert [b["session"]["nonce"] for b in bodies] == [1, 2, 3]
    assert all(b["source"] == "committed" and b["seed"] is None for b in bodies)
    seen += [json.dumps(b) for b in bodies]
    seen.append(client.get(f"/v1/tables/{table}/export").text)
    seen.append(client.get(f"/v1/tables/{table}/seeds/{seed_id}").text)
    seen.append(client.get("/metrics").text)
    late_roll = client.post(  # an error about the session must not leak it either
        "/v1/tft/contests",
        json={
            **BODY,
            "table": table,
            "seed": "x",
            "session": {"seed_id": seed_id, "client_seed": "y"},
        },
    )
    seen.append(late_roll.text)
    before = client.get(f"/v1/tables/{table}/verification").json()
    assert (before["ok"], before["unrevealed"]) == (True, 3)

    revealed = client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal").json()
    server_seed = revealed["server_seed"]
    assert commitment_of(server_seed) == session["commitment"]
    # Nothing before the reveal showed the server seed.
    assert not any(server_seed in text for text in seen)
    assert server_seed not in live_server.log_path.read_text()
    for body in bodies:
        seed = committed_seed(server_seed, body["session"]["client_seed"], body["session"]["nonce"])
        faces = derive_faces(seed, sides=6, count=len(body["dice"]))
        assert [d["face"] for d in body["dice"]] == list(faces)
    after = client.get(f"/v1/tables/{table}/verification").json()
    assert (after["ok"], after["unrevealed"]) == (True, 0)
    # The standard-library script checks a committed entry once the seed is revealed.
    entry = tmp_path / "entry.json"
    entry.write_text(client.get(f"/v1/tables/{table}/entries/2").text)
    script = Path(__file__).resolve().parents[1] / "scripts" / "verify_roll.py"
    checked = subprocess.run(
        [sys.executable, str(script), str(entry), "--server-seed", server_seed],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout


def test_no_roll_after_the_reveal(client: httpx.Client, table: str) -> None:
    seed_id = start(client, table)["seed_id"]
    assert roll(client, table, seed_id, "x").status_code == 200
    client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal")
    late = roll(client, table, seed_id, "y")
    assert late.status_code == 409
    assert "revealed" in late.json()["detail"]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


def test_unknown_session_and_mixed_sources_are_refused(client: httpx.Client, table: str) -> None:
    assert roll(client, table, "s" + "A" * 16, "x").status_code == 404
    seed_id = start(client, table)["seed_id"]
    both = client.post(
        "/v1/tft/contests",
        json={
            **BODY,
            "table": table,
            "seed": "s",
            "session": {"seed_id": seed_id, "client_seed": "x"},
        },
    )
    assert both.status_code == 422
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_concurrent_rolls_never_share_a_nonce(client: httpx.Client, table: str) -> None:
    seed_id = start(client, table)["seed_id"]
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda i: roll(client, table, seed_id, f"c{i}"), range(24)))
    nonces = sorted(r.json()["session"]["nonce"] for r in responses)
    assert nonces == list(range(1, 25))


def test_keyed_table_sessions_need_the_key(client: httpx.Client) -> None:
    created = client.post("/v1/tables").json()
    table = created["table"]
    assert client.post(f"/v1/tables/{table}/seeds").status_code == 401
    ok = client.post(
        f"/v1/tables/{table}/seeds", headers={"Authorization": f"Bearer {created['write_key']}"}
    )
    assert ok.status_code == 201


def rechain(entries: list[dict[str, Any]]) -> list[bytes]:
    prev = GENESIS_HASH
    out = []
    for entry in entries:
        entry["prev_hash"] = prev
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = prev = chain_hash(prev, body)
        out.append(json.dumps(entry).encode())
    return out


def test_verifier_catches_reused_nonces_and_false_reveals(client: httpx.Client, table: str) -> None:
    seed_id = start(client, table)["seed_id"]
    roll(client, table, seed_id, "a")
    roll(client, table, seed_id, "b")
    entries = [
        json.loads(line) for line in client.get(f"/v1/tables/{table}/export").content.splitlines()
    ]
    entries[1]["session"]["nonce"] = 1
    reused = verify_entries(rechain(entries), keys=None)
    assert (reused.ok, reused.first_bad_seq) == (False, 2)
    assert "reused" in (reused.reason or "")
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    false = verify_entries(lines, keys=None, reveals={seed_id: "not-the-server-seed"})
    assert (false.ok, false.first_bad_seq) == (False, 1)
    assert "commitment" in (false.reason or "")


def test_a_session_idle_for_a_day_is_revealed_by_the_server(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    """No session stays open and secret for ever: idle past IDLE_SECONDS, the sweeper
    reveals it (here its clock is moved, not waited for), and its rolls verify."""
    session = client.post(f"/v1/tables/{table}/seeds").json()
    body = {"a": {"attribute": 12}, "b": {"attribute": 12}, "table": table}
    ref = {"seed_id": session["seed_id"], "client_seed": "player"}
    assert client.post("/v1/tft/contests", json={**body, "session": ref}).status_code == 200
    key = f"fairroll:{{{table}}}:seed:{session['seed_id']}"
    day_ago = int(time.time() * 1000) - IDLE_SECONDS * 1000 - 1
    redis_client.hset(key, "used", day_ago)
    member = f"{table}\n{session['seed_id']}"
    redis_client.zadd(OPEN_SESSIONS, {member: day_ago})
    revealed = asyncio.run(_sweep_once(redis_client))
    assert revealed >= 1
    status = client.get(f"/v1/tables/{table}/seeds/{session['seed_id']}").json()
    assert (status["revealed"], status["revealed_by"]) == (True, "expiry")
    assert status["server_seed"] is not None
    assert redis_client.zscore(OPEN_SESSIONS, member) is None
    again = client.post("/v1/tft/contests", json={**body, "session": ref})
    assert again.status_code == 409  # closed to rolls
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert (report["ok"], report["unrevealed"]) == (True, 0)


def test_a_session_used_recently_is_not_revealed(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    session = client.post(f"/v1/tables/{table}/seeds").json()
    member = f"{table}\n{session['seed_id']}"
    old = int(time.time() * 1000) - IDLE_SECONDS * 1000 - 1
    redis_client.zadd(OPEN_SESSIONS, {member: old})  # created long ago, used just now
    asyncio.run(_sweep_once(redis_client))
    status = client.get(f"/v1/tables/{table}/seeds/{session['seed_id']}").json()
    assert status["revealed"] is False
    assert redis_client.zscore(OPEN_SESSIONS, member) > old  # looked at again later


async def _sweep_once(redis_client: Redis) -> int:
    url = redis_client.connection_pool.connection_kwargs
    redis = AsyncRedis(host=url["host"], port=url["port"])
    try:
        return await SeedSessions(redis).sweep()
    finally:
        await redis.aclose()
