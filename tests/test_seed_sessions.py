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

from fairroll.audit import AuditStore, Trust, load_signer, verify_entries
from fairroll.audit.entry import GENESIS_HASH, chain_hash
from fairroll.audit.keyspace import OPEN_SESSIONS
from fairroll.audit.sessions import IDLE_SECONDS, SeedSessions
from fairroll.randomness import commitment_of, committed_seed, derive_faces
from support import TEST_SIGNING_KEY, LiveServer

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}


def start(client: httpx.Client, table: str) -> dict[str, Any]:
    """A commit-reveal session (this file's subject; hash chains: test_chain_sessions)."""
    response = client.post(f"/v1/tables/{table}/seeds", json={"kind": "commit"})
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
    # The commitment, the roll and the reveal: the late roll added nothing.
    entries = client.get(f"/v1/tables/{table}/entries").json()["entries"]
    assert [e["mechanic"] for e in entries] == ["session.commit", "tft.contest", "session.reveal"]


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
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1  # the commitment


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


def _export(client: httpx.Client, table: str) -> list[dict[str, Any]]:
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    return [json.loads(line) for line in lines]


def _renumber(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for seq, entry in enumerate(entries, 1):
        entry["seq"] = seq
    return entries


def test_the_commitment_is_a_signed_entry_before_any_roll(client: httpx.Client, table: str) -> None:
    session = start(client, table)
    assert session["commit_seq"] == 1 and session["receipt"]["seq"] == 1
    first = client.get(f"/v1/tables/{table}/entries/1").json()
    assert first["mechanic"] == "session.commit" and first["source"] == "statement"
    assert first["request"] == {"seed_id": session["seed_id"], "commitment": session["commitment"]}
    assert first["entry_hash"] == session["receipt"]["entry_hash"]


def test_a_refused_roll_takes_no_nonce(client: httpx.Client, table: str) -> None:
    """A player cannot forge a hole: a roll the rules refuse consumes nothing."""
    seed_id = start(client, table)["seed_id"]
    bad = client.post(
        "/v1/tft/contests",
        json={
            # Refused by the rules, after the session's nonce was read: both given.
            "a": {"attribute": 12, "dice_count": 3},
            "b": {"attribute": 12},
            "table": table,
            "session": {"seed_id": seed_id, "client_seed": "x"},
        },
    )
    assert bad.status_code == 422
    assert roll(client, table, seed_id, "x").json()["session"]["nonce"] == 1


def test_a_caller_may_state_the_nonce_it_expects(client: httpx.Client, table: str) -> None:
    seed_id = start(client, table)["seed_id"]
    body = {**BODY, "table": table}
    ref = {"seed_id": seed_id, "client_seed": "x"}
    wrong = client.post("/v1/tft/contests", json={**body, "session": {**ref, "nonce": 2}})
    assert wrong.status_code == 409
    assert wrong.json()["nonce"] == 1 and "nonce 1" in wrong.json()["detail"]
    right = client.post("/v1/tft/contests", json={**body, "session": {**ref, "nonce": 1}})
    assert right.status_code == 200 and right.json()["session"]["nonce"] == 1
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 2


def test_verifier_catches_reused_and_skipped_nonces_and_false_reveals(
    client: httpx.Client, table: str
) -> None:
    seed_id = start(client, table)["seed_id"]
    for client_seed in "abc":
        roll(client, table, seed_id, client_seed)
    client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal")
    entries = _export(client, table)  # commit, rolls 1..3, reveal
    assert verify_entries(rechain(entries), Trust(keys=None)).ok

    reused = _export(client, table)
    reused[3]["session"]["nonce"] = 2
    report = verify_entries(rechain(reused), Trust(keys=None))
    assert (report.ok, report.first_bad_seq) == (False, 4)
    assert "reused" in (report.reason or "")

    # The operator grinds: drops the roll at nonce 2 (a worse outcome) from the log.
    skipped = _renumber(
        [
            e
            for e in _export(client, table)
            if e.get("session", {}) is None or e["session"]["nonce"] != 2
        ]
    )
    report = verify_entries(rechain(skipped), Trust(keys=None))
    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert "nonce 2 of seed session" in (report.reason or "") and "missing" in report.reason

    false = _export(client, table)
    false[4]["request"]["server_seed"] = "0" * 64
    report = verify_entries(rechain(false), Trust(keys=None))
    assert (report.ok, report.first_bad_seq) == (False, 5)
    assert "commitment" in (report.reason or "")

    # A reveal moved before the last roll: a roll after its session's reveal.
    late = _export(client, table)
    late[3], late[4] = late[4], late[3]
    late[3]["request"]["rolls"] = 2
    report = verify_entries(rechain(_renumber(late)), Trust(keys=None))
    assert (report.ok, report.first_bad_seq) == (False, 5)
    assert "after its reveal" in (report.reason or "")

    # A committed roll whose session was never committed in the log.
    orphan = _renumber(_export(client, table)[1:])
    orphan[0]["prev_hash"] = GENESIS_HASH
    report = verify_entries(rechain(orphan), Trust(keys=None))
    assert (report.ok, report.first_bad_seq) == (False, 1)
    assert "no commitment" in (report.reason or "")


def test_dice_that_do_not_follow_from_the_revealed_seed_are_caught(
    client: httpx.Client, table: str
) -> None:
    seed_id = start(client, table)["seed_id"]
    roll(client, table, seed_id, "a")
    client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal")
    entries = _export(client, table)
    die = entries[1]["dice"][0]
    die["face"] = die["face"] % 6 + 1
    report = verify_entries(rechain(entries), Trust(keys=None))
    # Found when the reveal makes the roll checkable, and named at the roll's seq.
    assert (report.ok, report.first_bad_seq) == (False, 2)
    assert "does not derive" in (report.reason or "")


def test_a_session_idle_for_a_day_is_revealed_by_the_server(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    """No session stays open and secret for ever: idle past IDLE_SECONDS, the sweeper
    reveals it (here its clock is moved, not waited for), and its rolls verify."""
    session = client.post(f"/v1/tables/{table}/seeds", json={"kind": "commit"}).json()
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
    session = client.post(f"/v1/tables/{table}/seeds", json={"kind": "commit"}).json()
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
        signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
        return await SeedSessions(AuditStore(redis, signer)).sweep()
    finally:
        await redis.aclose()
