"""Issue 38, items 4, 8 and 9: the holes an operator found in ``fairroll verify``, each
tried the way the operator would and held closed, against a real server's real log.

- a checkpoint signed by a key only ``keys.json`` names (not certified by the pinned
  root) stood in for every entry's signature: a forged log printed OK;
- a kept checkpoint whose size falls inside a range an epoch declared lost stood in for
  the signatures it covers and was never compared: a forged signature printed OK;
- two kept checkpoints of one size with two roots: only the last was kept;
- ``--cosigned`` counted one witness named twice as two; a good cosignature line
  followed by a forged one of the same key was accepted.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from fairroll.audit import Checkpoint, PublicKey, Signer, load_signer, merkle
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.cosignature import CosignatureError, cosign, open_cosignature, verifier_key
from fairroll.audit.entry import GENESIS_HASH, chain_hash, leaf_hash
from fairroll.audit.verify import EPOCH_MECHANIC, Trust, verify_entries
from support import TEST_ROOT, TEST_SIGNING_KEY

OPERATOR = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
#: A key the operator made for itself: nothing the pinned root certified.
OUTSIDER = load_signer(key=base64.b64encode(bytes([7] * 32)).decode(), key_file=None, dev_dir=None)
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
Log = list[dict[str, Any]]


def rolled(client: httpx.Client, table: str, count: int, seed: str = "hole") -> Log:
    for i in range(count):
        body = {**BODY, "table": table, "seed": f"{seed}-{i}"}
        assert client.post("/v1/tft/contests", json=body).is_success
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    return [json.loads(line) for line in lines]


def resigned(entries: Log, signer: Signer = OPERATOR) -> Log:
    """Re-chained and re-signed by ``signer``: what an operator with a key can do."""
    for index, entry in enumerate(entries):
        entry["prev_hash"] = entries[index - 1]["entry_hash"] if index else GENESIS_HASH
        entry["key_id"] = signer.key_id
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = signer.sign(entry["entry_hash"])
    return entries


def verify(tmp_path: Path, log: Log, *args: Any) -> subprocess.CompletedProcess[str]:
    export = tmp_path / "export.ndjson"
    export.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in log))
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", "verify", export, "--root", TEST_ROOT, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def kept(tmp_path: Path, name: str, checkpoint: Any) -> Path:
    path = tmp_path / name
    path.write_text(checkpoint if isinstance(checkpoint, str) else json.dumps(checkpoint))
    return path


def test_a_checkpoint_by_a_key_the_root_did_not_certify_stands_in_for_no_signature(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    log = rolled(client, table, 3)
    keys = client.get("/v1/keys").json()
    # Seq 2 given the dice and outcome of the same contest under another seed (rolled on
    # a scratch table, so every die re-derives and the outcome replays), re-chained,
    # every signature zeroed; a checkpoint of the forged tree signed by a key of the
    # operator's own, slipped into keys.json.
    scratch = next(
        e
        for i in range(20)
        if (e := rolled(client, f"{table}-s{i}", 2, seed=f"other{i}")[1])["outcome"]
        != log[1]["outcome"]
    )
    log[1].update({k: scratch[k] for k in ("seed", "dice", "outcome")})
    forged = resigned(log)
    for entry in forged:
        entry["signature"] = base64.b64encode(bytes(64)).decode()
    leaves = [leaf_hash(json.dumps(e, separators=(",", ":")).encode()) for e in forged]
    root = merkle.tree_hash_of(leaves)
    checkpoint = sign_checkpoint(OUTSIDER, table, 3, root, forged[-1]["entry_hash"])
    keys["keys"].append(
        {**keys["keys"][0], "key_id": OUTSIDER.key_id, "public_key": OUTSIDER.public_key.public_key}
    )
    keys_file = kept(tmp_path, "keys.json", keys)
    cp = kept(tmp_path, "cp.json", json.loads(msgspec.json.encode(checkpoint)))
    ran = verify(tmp_path, forged, "--keys", keys_file, "--checkpoint", cp)
    # The outsider's checkpoint is ignored (said on stderr): it stands in for nothing, and
    # the first zeroed signature is named.
    assert ran.returncode == 1, ran.stdout
    assert ran.stdout.startswith("FAIL at seq 1: the signature does not verify"), ran.stdout
    assert "not signed by a key the pinned root certifies: ignored" in ran.stderr


def test_a_kept_checkpoint_inside_a_lost_range_is_refused_not_skipped(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    log = rolled(client, table, 3)
    at_four = rolled(client, table, 1)  # a fourth roll: the player keeps size 4
    note = client.get(f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"}).text
    assert note.split("\n")[1] == "4"
    log = rolled(client, table, 1)  # seq 5
    del at_four
    # The operator declares seqs 4..5 lost behind an epoch at seq 6, and forges seq 2.
    commit_like = {k: v for k, v in log[0].items() if k not in ("seed", "session")}
    epoch = {
        **commit_like,
        "seq": 6,
        "mechanic": EPOCH_MECHANIC,
        "source": "statement",
        "dice": [],
        "request": {"lost_after": 3, "resume_after": 5, "reason": "lost in a crash"},
        "outcome": {"lost": 2},
    }
    epoch.pop("words", None)
    forged = resigned([*log[:3], epoch])
    forged[1]["signature"] = base64.b64encode(bytes(64)).decode()
    ran = verify(
        tmp_path,
        forged,
        "--since",
        kept(tmp_path, "kept.txt", note),
        "--keys",
        kept(tmp_path, "keys.json", client.get("/v1/keys").json()),
    )
    assert ran.returncode == 1, ran.stdout
    assert ran.stdout.startswith("FAIL at seq"), ran.stdout


def test_two_kept_checkpoints_of_one_size_with_two_roots_are_an_equivocation(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    log = rolled(client, table, 3)
    genuine = client.get(f"/v1/tables/{table}/checkpoint").json()
    other = sign_checkpoint(OPERATOR, table, 3, bytes(32), log[-1]["entry_hash"])
    first = kept(tmp_path, "other.json", json.loads(msgspec.json.encode(other)))
    second = kept(tmp_path, "genuine.json", genuine)
    keys = kept(tmp_path, "keys.json", client.get("/v1/keys").json())
    ran = verify(tmp_path, log, "--keys", keys, "--checkpoint", first, "--checkpoint", second)
    assert ran.returncode == 1, ran.stdout
    assert ran.stdout.startswith("FAIL at seq 3: two kept checkpoints of size 3"), ran.stdout
    assert genuine["text"] in ran.stdout and other.text in ran.stdout


@pytest.fixture
def witness() -> tuple[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    key = Ed25519PrivateKey.from_private_bytes(bytes([9] * 32))
    name = "witness.example/w1"
    return verifier_key(name, key.public_key().public_bytes_raw()), key


def test_one_witness_named_twice_counts_once(
    client: httpx.Client, table: str, tmp_path: Path, witness: tuple[str, Any]
) -> None:
    rolled(client, table, 2)
    note = client.get(f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"}).text
    vkey, key = witness
    cosigned = note + cosign(note, "witness.example/w1", key, 1_800_000_000) + "\n"
    path = kept(tmp_path, "note.txt", cosigned)
    keys = kept(tmp_path, "keys.json", client.get("/v1/keys").json())
    common = ["--keys", keys, "--root", TEST_ROOT]
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairroll.cli",
            "verify",
            "--cosigned",
            path,
            *common,
            "--witness",
            vkey,
            "--witness",
            vkey,
            "--quorum",
            "2",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert ran.returncode == 1 and "1 of the 1 witnesses" in ran.stdout, ran.stdout


def test_a_forged_line_after_a_good_one_of_the_same_key_rejects_the_note(
    client: httpx.Client, table: str, witness: tuple[str, Any]
) -> None:
    rolled(client, table, 1)
    note = client.get(f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"}).text
    vkey, key = witness
    good = cosign(note, "witness.example/w1", key, 1_800_000_000)
    raw = bytearray(base64.b64decode(good.split(" ")[2]))
    raw[-1] ^= 1
    bad = f"{good.rsplit(' ', 1)[0]} {base64.b64encode(bytes(raw)).decode()}"
    assert open_cosignature(note + good + "\n", vkey) == 1_800_000_000
    for lines in ([good, bad], [bad, good]):
        with pytest.raises(CosignatureError, match="does not verify"):
            open_cosignature(note + "\n".join(lines) + "\n", vkey)


def test_a_covering_checkpoint_that_fails_is_still_held_to_its_root() -> None:
    """A checkpoint offered to stand in for signatures only ever says "all good": when the
    pass with it fails, the log is read again with every signature checked, and the
    checkpoint is still a kept one (its root must match): a fork against it stays a
    fork, as the library's caller asked for nothing else."""
    vectors = Path(__file__).resolve().parents[1] / "docs" / "vectors"
    served = json.loads((vectors / "keys.json").read_text())
    case = "fork-against-kept-checkpoint"
    kept_file = vectors / "cases" / f"{case}.checkpoints-1.json"
    checkpoint = msgspec.json.decode(kept_file.read_bytes(), type=Checkpoint)
    listed = msgspec.convert(served["keys"], list[PublicKey])
    trust = Trust.rooted(listed, served["root"], covered_by=checkpoint)
    lines = (vectors / "cases" / f"{case}.ndjson").read_bytes().splitlines()
    report = verify_entries(lines, trust)
    assert (report.ok, report.first_bad_seq) == (False, 12), report
    assert "root" in (report.reason or "")
