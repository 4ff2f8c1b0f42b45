"""Several server processes on one Redis: key rotation, and one chain under concurrent load."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import msgspec
import pytest

from fairroll.audit import Draft, Head, Signer, Trust, load_signer, verify_entries
from fairroll.audit.signing import certify, seal
from fairroll.redis_server import RedisServer, free_port
from support import LiveServer, SessionTokens, player_client

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def key(byte: int) -> str:
    return base64.b64encode(bytes([byte]) * 32).decode()


@pytest.fixture
def shared_redis(tmp_path: Path) -> Iterator[RedisServer]:
    redis = RedisServer(tmp_path / "redis", port=free_port()).start()
    yield redis
    redis.stop()


def signer(byte: int) -> Signer:
    return load_signer(key=key(byte), key_file=None, dev_dir=None)


def certificate(root: int, byte: int) -> str:
    """The root key's certificate of another key: how an operator deploys a new key."""
    return msgspec.json.encode(certify(signer(root), signer(byte).public_key.public_key)).decode()


def serve(
    redis: RedisServer, tmp_path: Path, name: str, signing_key: str, cert: str = ""
) -> LiveServer:
    env = {"FAIRROLL_SIGNING_KEY": signing_key}
    if cert:
        env["FAIRROLL_KEY_CERTIFICATE"] = cert
    return LiveServer(redis.url, tmp_path / f"{name}.log", env=env)


def test_three_replicas_append_to_one_table_without_forks_or_reused_nonces(
    shared_redis: RedisServer, tmp_path: Path
) -> None:
    # One root (key 1), two more keys it certified: one deployment.
    servers = [
        serve(shared_redis, tmp_path, f"r{i}", key(i + 1), certificate(1, i + 1) if i else "")
        for i in range(3)
    ]
    try:
        tokens = SessionTokens()  # the session's player rolls through every replica
        clients = [player_client(s.url, tokens, timeout=30) for s in servers]
        seed_id = clients[0].post("/v1/tables/crowd/seeds").json()["seed_id"]

        def one(i: int) -> httpx.Response:
            body: dict[str, object] = {**BODY, "table": "crowd"}
            if i % 2:
                body["session"] = {"seed_id": seed_id, "client_seed": f"p{i}"}
            return clients[i % 3].post("/v1/tft/contests", json=body)

        with ThreadPoolExecutor(12) as pool:
            responses = list(pool.map(one, range(90)))
        assert all(r.status_code == 200 for r in responses), [r.text for r in responses][:3]
        seqs = sorted(r.json()["receipt"]["seq"] for r in responses)
        assert seqs == list(range(2, 92))  # no gap, no duplicate (seq 1: the commitment)
        nonces = sorted(r.json()["session"]["nonce"] for r in responses if r.json()["session"])
        assert nonces == list(range(1, 46))  # never reused
        keys = {k["key_id"]: k["public_key"] for k in clients[0].get("/v1/keys").json()["keys"]}
        assert len(keys) == 3  # every replica's key is published
        export = clients[1].get("/v1/tables/crowd/export").content.splitlines()
        assert verify_entries(export, Trust(keys=keys, root=signer(1).key_id)).ok
        assert clients[2].get("/v1/tables/crowd/verification").json()["ok"] is True
    finally:
        for server in servers:
            server.stop()


def test_rotated_keys_keep_old_entries_verifying_and_retirement_is_enforced(
    shared_redis: RedisServer, tmp_path: Path
) -> None:
    """Rotation: the root (key 7) certifies key 8; the operator retires key 7 with the new
    key, which writes a key.retire entry in every table. A replica left on key 7 appends
    nothing more; an entry key 7 signs after that position, even back-dated, fails."""
    old = serve(shared_redis, tmp_path, "old", key(7))
    with httpx.Client(base_url=old.url) as client:
        client.post("/v1/tft/contests", json={**BODY, "table": "rot"})
        old_key_id = client.get("/v1/keys").json()["keys"][0]["key_id"]
    new_env = {"FAIRROLL_SIGNING_KEY": key(8), "FAIRROLL_KEY_CERTIFICATE": certificate(7, 8)}
    new = serve(shared_redis, tmp_path, "new", key(8), certificate(7, 8))
    try:
        with httpx.Client(base_url=new.url) as client:
            client.post("/v1/tft/contests", json={**BODY, "table": "rot"})
            assert len(client.get("/v1/keys").json()["keys"]) == 2
            assert client.get("/v1/tables/rot/verification").json()["ok"] is True
            retired = subprocess.run(
                [sys.executable, "-m", "fairroll", "retire-key", old_key_id],
                env={**os.environ, "REDIS_URL": shared_redis.url, **new_env},
                capture_output=True,
                text=True,
                check=False,
            )
            assert retired.returncode == 0, retired.stderr
            assert "a key.retire entry in 1 table(s)" in retired.stdout
            # The replica still running on key 7 says so: not ready, and a roll is refused
            # as retired, not as "Redis did not answer".
            with httpx.Client(base_url=old.url) as stale_replica:
                ready = stale_replica.get("/readyz")
                assert ready.status_code == 503 and "was retired" in ready.text, ready.text
                refused = stale_replica.post("/v1/tft/contests", json={**BODY, "table": "rot"})
                assert refused.status_code == 503, refused.text
                assert refused.json()["type"].endswith("signing-key-retired"), refused.text
            keys = {k["key_id"]: k for k in client.get("/v1/keys").json()["keys"]}
            assert keys[old_key_id]["not_after"] is not None
            entries = client.get("/v1/tables/rot/entries").json()["entries"]
            assert [e["mechanic"] for e in entries][-1] == "key.retire"
            retired_at = entries[-1]["seq"]
            # Entries signed before the retirement still verify.
            assert client.get("/v1/tables/rot/verification").json()["ok"] is True
            export = client.get("/v1/tables/rot/export").content.splitlines()
    finally:
        new.stop()
        old.stop()
    # A replica started with the retired key refuses to start, and says why.
    stale = subprocess.run(
        [sys.executable, "-m", "fairroll", "serve", "--port", "1"],
        env={**os.environ, "REDIS_URL": shared_redis.url, "FAIRROLL_SIGNING_KEY": key(7)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert stale.returncode == 2, stale.stderr
    assert "was retired" in stale.stderr and "FAIRROLL_SIGNING_KEY" in stale.stderr
    # The operator, holding key 7, appends a back-dated entry at the tail: position, not
    # time, decides.
    last = json.loads(export[-1])
    draft = Draft.statement(
        "rot",
        "audit.epoch",
        {"lost_after": last["seq"], "resume_after": last["seq"], "reason": "x"},
    )
    forged = seal(
        draft, Head(last["seq"], last["entry_hash"]), signer(7), "2000-01-01T00:00:00.000Z"
    )
    report = verify_entries(
        [*export, msgspec.json.encode(forged)], Trust(keys=None, root=old_key_id)
    )
    assert (report.ok, report.first_bad_seq) == (False, retired_at + 1)
    assert f"after its retirement at seq {retired_at}" in (report.reason or "")
