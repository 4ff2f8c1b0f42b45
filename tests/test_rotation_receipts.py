"""An honest key rotation keeps every player's session going (docs/audit.md, "Receipts").

A receipt's ``key_id`` is the entry's signer, but its note is the table's checkpoint
when the receipt was made, signed by the key signing then. A chain committed under key
A, then A retired (``fairroll retire-key``: a ``key.retire`` in every table) and key B
signing: the renewal's receipt (``GET .../seeds/{id}?receipt=true``, or the note and
proof a client reads itself) proves A's entry in a note B signed. Both clients must go
on, and every verifier must still pass the log; a note the stolen retired key signs of
the tree after its retirement, or one a key the root never certified signs, must not.

Each test runs its own deployment on a Redis of its own (``retire-key`` retires the key
in every table of a Redis): the test key (the root) signing, then a key it certified
taking over on the same address.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import msgspec
import pytest

from fairroll.audit import Signer, load_signer
from fairroll.audit.checkpoint import parse_body, sign_checkpoint
from fairroll.audit.receipts import (
    RetiredKeyError,
    TrustedKeys,
    open_checkpoint,
    trusted_keys,
    verify_receipt,
)
from fairroll.audit.signing import certify
from fairroll.audit.verify import Trust, verify_entries
from fairroll.redis_server import RedisServer, free_port
from support import TEST_ROOT, TEST_SIGNING_KEY, LiveServer, built_typescript_client

ROOT = Path(__file__).resolve().parents[1]
OLD: Signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
#: The key the root certifies and rotates to (a fixed test key).
NEW_KEY = base64.b64encode(b"fairroll rotation receipts key01").decode()
NEW: Signer = load_signer(key=NEW_KEY, key_file=None, dev_dir=None)
#: A key the root never certified (an outsider's, or the operator's added by hand).
OUTSIDER: Signer = load_signer(
    key=base64.b64encode(b"fairroll rotation outsider key01").decode(),
    key_file=None,
    dev_dir=None,
)

Rewrite = Callable[[httpx.Request, httpx.Response], httpx.Response | None]


class Deployment:
    """One server on a Redis of its own, at one address: the root key signing first,
    then (``rotate``) the key it certified, and the root key retired by the new one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.redis = RedisServer(folder / "redis", port=free_port()).start()
        self.port = free_port()
        self.env = {"FAIRROLL_REDIS_TIMEOUT": "5"}
        self.server = LiveServer(self.redis.url, folder / "old.log", env=self.env, port=self.port)
        self.url = self.server.url

    def rotate(self) -> None:
        """``docs/audit.md``, "Keys in the log": deploy the new key with its certificate
        by the root, then ``fairroll retire-key <old key id>`` from it."""
        certificate = msgspec.json.encode(certify(OLD, NEW.public_key.public_key)).decode()
        new_env = {"FAIRROLL_SIGNING_KEY": NEW_KEY, "FAIRROLL_KEY_CERTIFICATE": certificate}
        self.server.stop()
        self.server = LiveServer(
            self.redis.url, self.folder / "new.log", env={**self.env, **new_env}, port=self.port
        )
        retired = subprocess.run(
            [sys.executable, "-m", "fairroll.cli", "retire-key", OLD.key_id],
            env={**os.environ, "REDIS_URL": self.redis.url, **new_env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert retired.returncode == 0, retired.stdout + retired.stderr

    def stop(self) -> None:
        self.server.stop()
        self.redis.stop()


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    made = Deployment(tmp_path)
    try:
        yield made
    finally:
        made.stop()


class Operator(httpx.BaseTransport):
    """The real server behind an operator who may rewrite its answers (``rewrite``)."""

    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()
        self.rewrite: Rewrite | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.real.handle_request(request)
        answer.read()
        instead = self.rewrite(request, answer) if self.rewrite else None
        return instead or answer


def notes_signed_by(signer: Signer) -> Rewrite:
    """``GET .../checkpoint`` answered with the table's tree of now, its note signed by
    ``signer`` (an operator holding that key) instead of the key signing now."""

    def rewrite(request: httpx.Request, answer: httpx.Response) -> httpx.Response | None:
        if request.method != "GET" or not request.url.path.endswith("/checkpoint"):
            return None
        served = json.loads(answer.content)
        size, root, head = parse_body(served["text"].split("\n\n", 1)[0] + "\n")
        table = served["text"].split("\n", 1)[0].split("/", 1)[1]
        forged = msgspec.to_builtins(sign_checkpoint(signer, table, size, root, head))
        body = {**served, **forged, "key_id": signer.key_id}
        return httpx.Response(
            200, headers={"content-type": "application/json"}, content=json.dumps(body)
        )

    return rewrite


def verified_by_every_python_verifier(url: str, table: str) -> None:
    """The server's own verification, and the Python core on the export under the root."""
    with httpx.Client(base_url=url, timeout=30) as http:
        said = http.get(f"/v1/tables/{table}/verification").json()
        assert said["ok"] is True, said
        export = http.get(f"/v1/tables/{table}/export").content.splitlines()
    report = verify_entries(export, Trust(keys=None, root=TEST_ROOT))
    assert report.ok, report.reason


def rotated_mid_chain(fc: ModuleType, deployment: Deployment, table: str) -> Any:
    """A player's client whose chain (two links) was used up under the old key: the
    renewal (its ``session.renew`` entry) is signed by the old key, before the rotation.
    ``dice.operator``: the wire between it and the server."""
    operator = Operator()
    dice = fc.Fairroll(deployment.url, player="Roth", root=TEST_ROOT, transport=operator)
    dice.operator = operator
    dice.session(table, length=2)
    for nonce in (1, 2):
        rolled = dice.roll_formula("1d20", table=table)
        assert rolled["session"]["nonce"] == nonce
        assert rolled["receipt"]["key_id"] == OLD.key_id
    deployment.rotate()
    return dice


def test_a_chain_committed_under_a_retired_key_renews_in_the_python_client(
    fc: ModuleType, deployment: Deployment
) -> None:
    """The honest rotation: the next chain was committed under the old key, the player
    takes it up after the rotation (its commitment proven in the note the new key
    signed) and rolls on; every Python verifier passes the log."""
    table = "t-rotation-renewal"
    dice = rotated_mid_chain(fc, deployment, table)
    for nonce in (3, 4, 5):  # the renewed chain, then one committed under the new key
        rolled = dice.roll_formula("1d20", table=table)
        assert rolled["session"]["nonce"] == nonce
        assert rolled["receipt"]["key_id"] == NEW.key_id
    verified_by_every_python_verifier(deployment.url, table)


def test_a_chain_committed_under_a_retired_key_rolls_on_in_the_python_client(
    fc: ModuleType, deployment: Deployment
) -> None:
    """The rotation in the middle of a chain: its rolls after the rotation are signed by
    the new key, which this client had not read; it reads the listing again and goes on."""
    table = "t-rotation-rolls-on"
    dice = fc.Fairroll(deployment.url, player="Roth", root=TEST_ROOT)
    dice.session(table, length=3)
    assert dice.roll_formula("1d20", table=table)["receipt"]["key_id"] == OLD.key_id
    deployment.rotate()
    for nonce in (2, 3, 4):
        assert dice.roll_formula("1d20", table=table)["session"]["nonce"] == nonce
    verified_by_every_python_verifier(deployment.url, table)


def answer_lost_across_a_rotation(deployment: Deployment) -> Rewrite:
    """The next roll is made (its entry signed by the old key), then its answer is lost
    (503) while the operator rotates the key: the client's retry, with the same
    Idempotency-Key, is answered by the new key's server with the same roll, its receipt
    the table's note of now, signed by the new key."""
    lost: list[str] = []

    def rewrite(request: httpx.Request, answer: httpx.Response) -> httpx.Response | None:
        if lost or request.method != "POST" or "/seeds" in request.url.path:
            return None
        lost.append(json.loads(answer.content)["receipt"]["key_id"])
        deployment.rotate()
        problem = {"title": "Service Unavailable", "status": 503, "detail": "lost"}
        return httpx.Response(
            503, headers={"content-type": "application/problem+json"}, content=json.dumps(problem)
        )

    return rewrite


def test_a_roll_retried_across_a_rotation_holds_in_the_python_client(
    fc: ModuleType, deployment: Deployment
) -> None:
    """A retried roll after a rotation: the entry (the old key's) proven in the new key's
    note, which this client, holding the keys it read before, had not read: it reads the
    listing again, once, and the roll holds."""
    table = "t-rotation-retried"
    operator = Operator()
    dice = fc.Fairroll(deployment.url, player="Roth", root=TEST_ROOT, transport=operator)
    dice.session(table, length=3)
    assert dice.roll_formula("1d20", table=table)["receipt"]["key_id"] == OLD.key_id
    operator.rewrite = answer_lost_across_a_rotation(deployment)
    with pytest.raises(fc.FairrollError):
        dice.roll_formula("1d20", table=table)
    retried = dice.roll_formula("1d20", table=table)
    assert retried["session"]["nonce"] == 2 and retried["receipt"]["key_id"] == OLD.key_id
    new_only = {NEW.key_id: NEW.public_key.public_key}
    assert open_checkpoint(retried["receipt"]["checkpoint"], new_only)[0] > 2  # the new key's
    assert dice.roll_formula("1d20", table=table)["receipt"]["key_id"] == NEW.key_id
    verified_by_every_python_verifier(deployment.url, table)


def test_a_sessions_receipt_after_a_rotation_is_the_old_keys_entry_in_the_new_keys_note(
    deployment: Deployment,
) -> None:
    """``GET .../seeds/{id}?receipt=true`` after a rotation: the receipt names the entry's
    key (the retired one), its note is signed by the key that took over. It holds under
    the keys the pinned root certified; it would not under the entry's key alone (the
    bug: both clients opened the note only under ``receipt.key_id``)."""
    table = "t-rotation-status"
    with httpx.Client(base_url=deployment.url, timeout=30) as http:
        made = http.post(f"/v1/tables/{table}/seeds", json={"length": 2}).json()
        seed_id = made["seed_id"]
    deployment.rotate()
    with httpx.Client(base_url=deployment.url, timeout=30) as http:
        status = http.get(f"/v1/tables/{table}/seeds/{seed_id}", params={"receipt": True}).json()
        entry = http.get(f"/v1/tables/{table}/entries/{status['chain_seq']}").json()
        listing = http.get("/v1/keys").json()
    receipt = status["receipt"]
    assert (receipt["key_id"], entry["key_id"]) == (OLD.key_id, OLD.key_id)
    keys = trusted_keys(listing, TEST_ROOT)
    assert keys.retired == {OLD.key_id: None}  # the listing marks it retired, at no seq
    size, _ = verify_receipt(entry, receipt, keys)
    assert size == receipt["tree_size"] > entry["seq"]
    alone = {OLD.key_id: keys[OLD.key_id]}
    with pytest.raises(ValueError, match="no signature"):
        open_checkpoint(receipt["checkpoint"], alone)


def test_a_note_the_stolen_retired_key_signs_after_its_retirement_is_unfair(
    fc: ModuleType, deployment: Deployment
) -> None:
    """The attacker's side of the rule: the operator holds the retired key (stolen, or
    kept) and proves the renewal in a note of the tree now, past the key's retirement,
    signed by it. The client refuses: a retired key vouches only for a tree below its
    ``key.retire``, and the listing says it is retired."""
    table = "t-rotation-stolen"
    dice = rotated_mid_chain(fc, deployment, table)
    dice.operator.rewrite = notes_signed_by(OLD)
    with pytest.raises(fc.UnfairRollError, match="retired"):
        dice.roll_formula("1d20", table=table)


def test_a_note_a_key_the_root_never_certified_signs_is_unfair(
    fc: ModuleType, deployment: Deployment
) -> None:
    """A key the pinned root did not certify never counts, rotation or not: the renewal
    proven in a note the operator signed with a key of its own is refused."""
    table = "t-rotation-outsider"
    dice = rotated_mid_chain(fc, deployment, table)
    dice.operator.rewrite = notes_signed_by(OUTSIDER)
    with pytest.raises(fc.UnfairRollError, match="no signature by a key the pinned root"):
        dice.roll_formula("1d20", table=table)


def test_a_retired_key_opens_a_note_below_its_retirement_and_none_at_or_past_it() -> None:
    """Row 5 for a receipt's note, with the seq of the ``key.retire`` known (the log the
    caller read): the retired key opens a note below it (a receipt of before the
    rotation), none at or past it (a stolen key's note of the tree after)."""
    note = sign_checkpoint(OLD, "t", 7, b"\x01" * 32, "ab" * 32).text
    public = {OLD.key_id: OLD.public_key.public_key}
    assert open_checkpoint(note, TrustedKeys(public, {OLD.key_id: 8}))[0] == 7
    with pytest.raises(RetiredKeyError, match="retired at seq 7"):
        open_checkpoint(note, TrustedKeys(public, {OLD.key_id: 7}))


# -- the npm client ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built() -> Iterator[Path]:
    with built_typescript_client() as index:
        yield index


def test_a_chain_committed_under_a_retired_key_renews_in_the_npm_client(
    built: Path, deployment: Deployment
) -> None:
    """tests/js/npm_rotation.mjs: the npm client's players (one renews onto the chain the
    old key committed, proven by ``?receipt=true`` in the new key's note; one rolls on in
    the middle of a chain; one sends again a roll whose answer was lost, its entry the
    old key's, its note the new key's) go on across the rotation, and the JavaScript core
    passes the log under the pinned root."""
    node = subprocess.Popen(
        [
            "node",
            str(ROOT / "tests" / "js" / "npm_rotation.mjs"),
            str(built),
            deployment.url,
            TEST_ROOT,
            "t-rotation-npm",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert node.stdout is not None and node.stdin is not None
        before = json.loads(node.stdout.readline() or "null")
        assert before is not None, node.stderr.read() if node.stderr else ""
        deployment.rotate()
        node.stdin.write("rotated\n")
        node.stdin.flush()
        out, err = node.communicate(timeout=180)
    finally:
        if node.poll() is None:
            node.kill()
    assert node.returncode == 0, err
    after = json.loads(out)
    for name, said in {**before, **after}.items():
        assert said["ok"], (name, said)
    assert after["renewed"]["nonce"] == 3 and after["renewed"]["key_id"] == NEW.key_id
    assert after["rolls-on"]["nonce"] == 2 and after["rolls-on"]["key_id"] == NEW.key_id
    assert after["retried"]["nonce"] == 2 and after["retried"]["key_id"] == OLD.key_id
    assert after["log"]["verified"] and after["log"]["ok"], after["log"]
    verified_by_every_python_verifier(deployment.url, "t-rotation-npm")
