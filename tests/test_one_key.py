"""One server, one key, one root (issue 28, item 6): outside the embedded development mode
a server without a signing key refuses to start, naming the variable to set, and so does
every operator command that writes to the log; nothing is signed with a key of its own.
``GET /v1/keys`` serves each key's certificate, so a rotated key is trusted from the pinned
root alone, even by a table that has not logged the key yet. Real redis-server, real HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import msgspec
from redis import Redis

from fairroll.audit.signing import KeyCertificate, certify, load_signer, verify_certificate
from fairroll.redis_server import RedisServer, free_port
from support import TEST_SIGNING_KEY, LiveServer

KEYS = "fairroll:keys"


def fairroll(
    *args: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FAIRROLL_")}
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_server_without_a_key_refuses_to_start(redis_server: RedisServer) -> None:
    redis = Redis.from_url(redis_server.url)
    before = redis.hgetall(KEYS)
    ran = fairroll("serve", "--port", str(free_port()), env={"REDIS_URL": redis_server.url})
    assert ran.returncode == 2
    assert "FAIRROLL_SIGNING_KEY" in ran.stderr and "Traceback" not in ran.stderr
    assert redis.hgetall(KEYS) == before  # no key of its own was published


def test_a_bad_key_file_is_named_without_a_traceback(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.pem"
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key\n")
    for path, says in ((missing, "No such file"), (garbage, "holds no Ed25519 key")):
        env = {"REDIS_URL": redis_server.url, "FAIRROLL_SIGNING_KEY_FILE": str(path)}
        ran = fairroll("serve", "--port", str(free_port()), env=env)
        assert ran.returncode == 2, ran.stderr
        assert "FAIRROLL_SIGNING_KEY_FILE" in ran.stderr and says in ran.stderr, ran.stderr
        assert "Traceback" not in ran.stderr


def test_an_operator_command_without_a_key_writes_nothing(redis_server: RedisServer) -> None:
    """``fairroll retire-key`` as docs/operations.md writes it, but with the key left out:
    it used to print success and sign ``key.retire`` with a fresh self-rooted key."""
    redis = Redis.from_url(redis_server.url)
    redis.hsetnx(KEYS, "ed25519:0000000000000000", b"{}")
    before = (redis.hgetall(KEYS), sorted(redis.scan_iter("fairroll:{*")))
    for command in (
        ("retire-key", "ed25519:0000000000000000"),
        ("open-epoch", "some-table", "--resume-after", "0", "--reason", "test"),
    ):
        ran = fairroll(*command, env={"REDIS_URL": redis_server.url})
        assert ran.returncode == 2, (command, ran.stdout, ran.stderr)
        assert "FAIRROLL_SIGNING_KEY" in ran.stderr and "Traceback" not in ran.stderr
    assert (redis.hgetall(KEYS), sorted(redis.scan_iter("fairroll:{*"))) == before
    redis.hdel(KEYS, "ed25519:0000000000000000")


def test_new_key_prints_what_to_pin_and_never_overwrites(tmp_path: Path) -> None:
    out = tmp_path / "signing-key.pem"
    ran = fairroll("new-key", "--out", str(out), env={"FAIRROLL_LOG_NAME": "dice.example"})
    assert ran.returncode == 0, ran.stderr
    said = dict(line.split(": ", 1) for line in ran.stderr.splitlines())
    signer = load_signer(key=None, key_file=out, dev_dir=None)
    assert said["key_id"] == signer.key_id
    assert said["public_key"] == signer.public_key.public_key
    assert said["note_key"].startswith("dice.example+")
    assert out.stat().st_mode & 0o777 == 0o600
    again = fairroll("new-key", "--out", str(out), env={})
    assert again.returncode == 2 and "exists" in again.stderr
    assert load_signer(key=None, key_file=out, dev_dir=None).key_id == signer.key_id


def test_keys_serve_the_certificate_that_roots_a_rotated_key(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A fresh server on a rotated key, before any roll: ``GET /v1/keys`` alone lets a
    verifier that pins the root trust the new key (and not a key certified by another)."""
    root = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    new = load_signer(key=None, key_file=None, dev_dir=None, ephemeral=True)
    certificate = msgspec.json.encode(certify(root, new.public_key.public_key)).decode()
    pem = tmp_path / "new.pem"
    pem.write_bytes(new.private_pem())
    env = {
        "FAIRROLL_SIGNING_KEY": "",
        "FAIRROLL_SIGNING_KEY_FILE": str(pem),
        "FAIRROLL_KEY_CERTIFICATE": certificate,
    }
    server = LiveServer(redis_server.url, tmp_path / "server.log", env=env)
    try:
        listed = httpx.get(f"{server.url}/v1/keys", timeout=10).json()
    finally:
        server.stop()
    assert listed["root"] == root.key_id
    served = {key["key_id"]: key for key in listed["keys"]}[new.key_id]
    cert = msgspec.convert(served["certificate"], KeyCertificate)
    assert verify_certificate(cert, root=root.key_id)
    assert cert.public_key == served["public_key"]
    stranger = load_signer(key=None, key_file=None, dev_dir=None, ephemeral=True)
    assert not verify_certificate(cert, root=stranger.key_id)
