"""An operator's keys from the command line: ``fairroll keygen`` makes one and prints what
to pin; ``certify-key`` certifies a raw 32-byte Ed25519 public key and nothing else (an
SPKI, what ``openssl pkey -pubout`` writes, would get a certificate of a key id no key
has)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import msgspec
from cryptography.hazmat.primitives import serialization

from fairroll.audit.signing import KeyCertificate, load_signer, verify_certificate
from fairroll.redis_server import RedisServer
from support import LiveServer
from support import fairroll_cli as fairroll


def said(stderr: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in stderr.splitlines() if ": " in line)


def test_keygen_writes_a_key_and_prints_its_id_and_raw_public_key(tmp_path: Path) -> None:
    made = fairroll("keygen", "--out", tmp_path / "root.pem")
    assert made.returncode == 0, made.stderr
    printed = said(made.stderr)
    signer = load_signer(key=None, key_file=tmp_path / "root.pem", dev_dir=None)
    assert printed["key_id"] == signer.key_id
    assert len(base64.b64decode(printed["public_key"], validate=True)) == 32
    assert (tmp_path / "root.pem").stat().st_mode & 0o777 == 0o600
    again = fairroll("keygen", "--out", tmp_path / "root.pem")
    assert again.returncode == 2 and "never written over" in again.stderr


def test_certify_key_takes_a_raw_key_and_refuses_anything_else(tmp_path: Path) -> None:
    assert fairroll("keygen", "--out", tmp_path / "root.pem").returncode == 0
    new = fairroll("keygen", "--out", tmp_path / "new.pem")
    raw = said(new.stderr)["public_key"]
    certified = fairroll("certify-key", raw, "--root-key-file", tmp_path / "root.pem")
    assert certified.returncode == 0, certified.stderr
    certificate = msgspec.json.decode(certified.stdout, type=KeyCertificate)
    root = said(fairroll("keygen", "--out", tmp_path / "other.pem").stderr)  # unrelated root
    assert verify_certificate(certificate) and not verify_certificate(certificate, root["key_id"])
    assert certificate.key_id == said(new.stderr)["key_id"]

    private = serialization.load_pem_private_key((tmp_path / "new.pem").read_bytes(), None)
    spki = private.public_key().public_bytes(  # the SPKI openssl pkey -pubout writes
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for bogus, says in [
        (base64.b64encode(spki).decode(), f"its raw key is {raw}"),
        (base64.b64encode(bytes(44)).decode(), "is 32 bytes; this is 44"),
        (base64.b64encode(bytes(31)).decode(), "is 32 bytes; this is 31"),
        ("not base64!", "is not base64"),
    ]:
        refused = fairroll("certify-key", bogus, "--root-key-file", tmp_path / "root.pem")
        assert refused.returncode == 2, (bogus, refused.stdout)
        assert refused.stdout == "" and says in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert json.loads(certified.stdout)["public_key"] == raw


def test_the_help_lists_every_command_and_serve_names_its_environment() -> None:
    top = fairroll("--help").stdout
    assert "`" not in top
    for command in ("serve", "verify", "keygen", "certify-key", "retire-key", "archive"):
        assert command in top
    serve = fairroll("serve", "--help").stdout
    settings = Path(__file__).resolve().parent.parent / "service/fairroll/api/settings.py"
    read = set(re.findall(r"\b(?:REDIS_URL|FAIRROLL_[A-Z_]+)\b", settings.read_text()))
    assert read, "the settings read no variable?"
    missing = sorted(name for name in read if name not in serve)
    assert missing == [], missing


def test_verify_says_the_verdict_first_and_never_ok_unchecked(
    live_server: LiveServer, tmp_path: Path
) -> None:
    table = "t-verdict-" + os.urandom(4).hex()
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        assert http.post("/v1/dice/rolls", json={"table": table, "formula": "1d20"}).is_success
        (tmp_path / "export.ndjson").write_bytes(http.get(f"/v1/tables/{table}/export").content)
        keys = http.get("/v1/keys").json()
        (tmp_path / "keys.json").write_text(json.dumps(keys))
    export = tmp_path / "export.ndjson"
    unchecked = fairroll("verify", export)
    assert unchecked.returncode == 4, unchecked.stdout
    assert unchecked.stdout.startswith("NOT VERIFIED: no root key is pinned")
    # keys.json alone is the server's own word on its keys: no root, not verified.
    unrooted = fairroll("verify", export, "--keys", tmp_path / "keys.json")
    assert unrooted.returncode == 4, unrooted.stdout
    assert unrooted.stdout.startswith("NOT VERIFIED: no root key is pinned")
    accepted = fairroll("verify", export, "--allow-unsigned")
    assert accepted.returncode == 0 and accepted.stdout.startswith("OK, UNSIGNED: 1 entries")
    checked = fairroll("verify", export, "--keys", tmp_path / "keys.json", "--root", keys["root"])
    assert checked.returncode == 0 and checked.stdout.startswith("OK: 1 entries"), checked.stdout
    missing = fairroll(
        "verify", export, "--keys", tmp_path / "keys.json", "--since", tmp_path / "kept.txt"
    )
    assert missing.returncode == 2 and "the first time, leave it out" in missing.stderr
    assert "Traceback" not in missing.stderr


BAD_SETTINGS = [
    ({"FAIRROLL_SIGNING_KEY_FILE": "{tmp}/missing.pem"}, "FAIRROLL_SIGNING_KEY_FILE"),
    ({"FAIRROLL_SIGNING_KEY_FILE": "{tmp}/garbage.pem"}, "FAIRROLL_SIGNING_KEY_FILE"),
    ({"FAIRROLL_SIGNING_KEY": "not a key"}, "FAIRROLL_SIGNING_KEY"),
    ({"FAIRROLL_RATE_LIMIT": "ten"}, "FAIRROLL_RATE_LIMIT"),
    ({"FAIRROLL_REDIS_TIMEOUT": "-1"}, "FAIRROLL_REDIS_TIMEOUT"),
    ({"FAIRROLL_DURABILITY": "sometimes"}, "FAIRROLL_DURABILITY"),
]


def test_a_bad_setting_stops_serve_in_one_line_naming_the_variable(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    (tmp_path / "garbage.pem").write_text("garbage\n")
    for redis in ({}, {"REDIS_URL": redis_server.url}):  # embedded and external Redis alike
        for setting, variable in BAD_SETTINGS:
            env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRROLL_")}
            env.pop("REDIS_URL", None)
            env |= redis | {k: v.format(tmp=tmp_path) for k, v in setting.items()}
            serve = ["serve", "--port", "1", "--data-dir", str(tmp_path / "data")]
            ran = subprocess.run(
                [sys.executable, "-m", "fairroll.cli", *serve],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
                check=False,
            )
            assert ran.returncode == 2, (setting, ran.stderr)
            line = ran.stderr.strip()
            assert line.startswith("fairroll: cannot start: ") and "\n" not in line, line
            assert variable in line and "Traceback" not in line, line
