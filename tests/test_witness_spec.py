"""``fairroll witness`` to the current C2SP tlog-witness, over real HTTP: the exact
content types, the status of each refusal, the monitors' read of the latest cosigned
checkpoint; and the service as a witness's client: it asks again, the table idle, until
the witness cosigns, and logs why a witness refused."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import Signer, load_signer, merkle, note
from fairroll.audit.checkpoint import note_key, sign_checkpoint
from fairroll.audit.cosignature import open_cosignature, raw_public_key, verifier_key
from fairroll.redis_server import RedisServer, free_port
from support import TEST_SIGNING_KEY, LiveServer

OPERATOR = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
LOG_VKEY = note_key("fairroll", OPERATOR.public_key.public_key)
ORIGIN = "fairroll/witnessed"
NAME = "witness.example/w1"


class Witness:
    """``fairroll witness`` on ``port``: its verifier key and base URL."""

    def __init__(
        self,
        folder: Path,
        logs: list[str],
        port: int | None = None,
        key: Ed25519PrivateKey | None = None,
    ) -> None:
        key = key or Ed25519PrivateKey.generate()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "witness.pem").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.vkey = verifier_key(NAME, raw_public_key(key))
        command = [
            sys.executable,
            "-m",
            "fairroll.cli",
            "witness",
            "--name",
            NAME,
            "--key-file",
            str(folder / "witness.pem"),
            "--state",
            str(folder / "state.json"),
            "--port",
            str(self.port),
        ]
        for log in logs:
            command += ["--log", log]
        self.process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{self.url}/livez", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the witness did not start"
                time.sleep(0.1)

    def add(self, old: int, proof: list[bytes], checkpoint: str) -> httpx.Response:
        lines = "".join(f"{base64.b64encode(h).decode()}\n" for h in proof)
        body = f"old {old}\n{lines}\n{checkpoint}"
        return httpx.post(f"{self.url}/add-checkpoint", content=body.encode(), timeout=10)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(15)


@pytest.fixture
def witness(tmp_path: Path) -> Iterator[Witness]:
    """A witness of ``ORIGIN`` under two keys: the operator's and a second one."""
    second = note_key("fairroll", SECOND.public_key.public_key)
    running = Witness(tmp_path / "w", [f"{ORIGIN}={LOG_VKEY}", f"{ORIGIN}={second}"])
    yield running
    running.stop()


SECOND = Signer.generate()


def tree(size: int, salt: bytes = b"") -> tuple[list[bytes], bytes]:
    """The stored hashes and root of a made-up log of ``size`` entries."""
    frontier, stored = merkle.Frontier.empty(), []
    for i in range(size):
        frontier, new = frontier.append(merkle.leaf(salt + i.to_bytes(4, "big")))
        stored += new
    return stored, frontier.root()


def checkpoint(size: int, salt: bytes = b"", signer: Signer = OPERATOR) -> str:
    _, root = tree(size, salt)
    return sign_checkpoint(signer, "witnessed", size, root, "ab" * 32).text


def proof(old: int, new: int) -> list[bytes]:
    stored, _ = tree(new)
    return merkle.consistency_proof(old, new, lambda i: [stored[x] for x in i])


def test_the_witness_answers_each_case_with_the_status_and_type_the_spec_says(
    witness: Witness,
) -> None:
    three, five = checkpoint(3), checkpoint(5)
    first = witness.add(0, [], three)
    assert first.status_code == 200, first.text
    assert first.headers["content-type"] == "text/plain; charset=utf-8"  # the charset once
    assert open_cosignature(three + first.text, witness.vkey) > 0
    # 409: the size it holds, as exactly text/x.tlog.size (a log client compares it).
    stale = witness.add(0, [], five)
    assert stale.status_code == 409 and stale.text == "3\n"
    assert stale.headers["content-type"] == "text/x.tlog.size"
    # 422: a second tree of the size it holds (a fork), and a proof that does not hold.
    fork = witness.add(3, [], checkpoint(3, salt=b"fork"))
    assert fork.status_code == 422, fork.text
    assert fork.headers["content-type"] == "text/plain; charset=utf-8"
    assert witness.add(3, proof(3, 5)[::-1], five).status_code == 422
    assert witness.add(3, proof(3, 5), five).status_code == 200
    # 400: an old size beyond the checkpoint's; 404: a log it does not witness.
    assert witness.add(5, [], three).status_code == 400
    elsewhere = sign_checkpoint(OPERATOR, "elsewhere", 1, b"\x01" * 32, "ab" * 32).text
    assert witness.add(0, [], elsewhere).status_code == 404
    assert witness.add(5, [], five).status_code == 200  # the same tree again: cosigned


def test_a_trusted_signature_followed_by_a_failing_one_is_refused_403(witness: Witness) -> None:
    """A line whose name and key hash are a trusted key's must verify: one that fails
    refuses the note, whatever good line of the same or another trusted key stands
    before it (the old witness opened the note one key at a time and took the first
    that verified, so a failing line of the second key was passed over)."""
    three = checkpoint(3)
    for key in (OPERATOR, SECOND):
        raw = base64.b64decode(key.public_key.public_key)
        hash_ = note.key_hash("fairroll", note.SIGNER_TYPE, raw)
        failing = note.signature_line("fairroll", hash_, b"\x00" * 64)
        refused = witness.add(0, [], f"{three}{failing}\n")
        assert refused.status_code == 403, (key.key_id, refused.text)
    stranger = checkpoint(3, signer=Signer.generate())
    assert witness.add(0, [], stranger).status_code == 403
    assert witness.add(0, [], three).status_code == 200  # nothing was recorded before


def test_monitors_read_the_latest_cosigned_checkpoint_by_its_origins_hash(
    witness: Witness,
) -> None:
    """``GET <monitoring prefix>/<origin hash>/checkpoint``: the lowercase hex SHA-256
    of the origin; the note the log signed with the witness's cosignature; 404 before it
    cosigned one or for a log it does not know."""
    where = f"{witness.url}/{hashlib.sha256(ORIGIN.encode()).hexdigest()}/checkpoint"
    assert httpx.get(where).status_code == 404
    three, five = checkpoint(3), checkpoint(5)
    assert witness.add(0, [], three).status_code == 200
    cosigned = witness.add(3, proof(3, 5), five)
    read = httpx.get(where)
    assert read.status_code == 200
    assert read.headers["content-type"] == "text/plain; charset=utf-8"
    assert read.text == five + cosigned.text
    assert open_cosignature(read.text, witness.vkey) > 0
    signer = note.SignerVerifier("fairroll", base64.b64decode(OPERATOR.public_key.public_key))
    assert note.open_note(read.text, [signer]).text.startswith(f"{ORIGIN}\n5\n")
    assert witness.add(5, [], checkpoint(5, salt=b"fork")).status_code == 422
    assert httpx.get(where).text == read.text  # a refused fork changes nothing
    other = hashlib.sha256(b"fairroll/elsewhere").hexdigest()
    assert httpx.get(f"{witness.url}/{other}/checkpoint").status_code == 404


def test_the_service_asks_again_while_the_table_is_idle_until_a_witness_cosigns(
    redis_server: RedisServer, tmp_path: Path, table: str
) -> None:
    """A witness down when the table last grew, and one that refuses: the server logs
    the refusal with the witness's reason, and asks the first again, with no roll since,
    until it cosigns (the old submitter marked the size as sent whatever the answer, so
    the note stayed uncosigned until the next roll)."""
    stranger = note_key("fairroll", Signer.generate().public_key.public_key)
    refusing = Witness(tmp_path / "refusing", [f"fairroll/*={stranger}"])
    later = free_port()
    down_key = Ed25519PrivateKey.generate()
    down_vkey = verifier_key(NAME, raw_public_key(down_key))
    server = LiveServer(
        redis_server.url,
        tmp_path / "server.log",
        env={
            "FAIRROLL_WITNESSES": f"{refusing.url} {refusing.vkey},"
            f"http://127.0.0.1:{later} {down_vkey}",
            "FAIRROLL_WITNESS_SECONDS": "0.2",
        },
    )
    coming: Witness | None = None
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            rolled = client.post(
                "/v1/tft/contests",
                json={"a": {"attribute": 12}, "b": {"attribute": 12}, "table": table},
            )
            assert rolled.status_code == 200, rolled.text
            time.sleep(1.5)  # a few rounds with the second witness down
            coming = Witness(
                tmp_path / "coming", [f"fairroll/*={LOG_VKEY}"], port=later, key=down_key
            )
            deadline = time.monotonic() + 30
            while not client.get(f"/v1/tables/{table}/cosignatures").json()["cosignatures"]:
                assert time.monotonic() < deadline, "the idle table was never cosigned"
                time.sleep(0.2)
        log = (tmp_path / "server.log").read_text()
        assert "refused" in log and "not signed by this log's keys" in log, log[-2000:]
    finally:
        server.stop()
        refusing.stop()
        if coming is not None:
            coming.stop()
