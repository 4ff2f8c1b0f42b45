"""Signed checkpoints and receipts catch a rewritten, truncated or forked table later."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import msgspec

from fairroll.audit import Checkpoint, Signer, Trust, verify_checkpoint, verify_entries
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.entry import GENESIS_HASH, chain_hash
from support import TEST_ROOT

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def roll(client: httpx.Client, table: str, count: int) -> list[dict[str, Any]]:
    return [
        client.post("/v1/tft/contests", json={**BODY, "table": table, "seed": f"s{i}"}).json()
        for i in range(count)
    ]


def keys_of(client: httpx.Client) -> dict[str, str]:
    return {k["key_id"]: k["public_key"] for k in client.get("/v1/keys").json()["keys"]}


def test_checkpoint_is_signed_and_names_size_and_head(client: httpx.Client, table: str) -> None:
    rolls = roll(client, table, 3)
    checkpoint = msgspec.convert(client.get(f"/v1/tables/{table}/checkpoint").json(), Checkpoint)
    assert (checkpoint.size, checkpoint.head_hash) == (3, rolls[-1]["receipt"]["entry_hash"])
    assert checkpoint.text.startswith(f"fairroll/{table}\n3\n{checkpoint.root_hash}\n")
    assert f"\nchain {checkpoint.head_hash}\n\n\u2014 fairroll " in checkpoint.text
    assert verify_checkpoint(checkpoint, keys_of(client)[checkpoint.key_id])
    forged = msgspec.structs.replace(checkpoint, size=2)
    assert not verify_checkpoint(forged, keys_of(client)[checkpoint.key_id])


def test_export_a_seq_range(client: httpx.Client, table: str) -> None:
    roll(client, table, 5)
    lines = client.get(
        f"/v1/tables/{table}/export", params={"from_seq": 2, "to_seq": 4}
    ).content.splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [2, 3, 4]
    # A range verifies on its own: its first entry's prev_hash is taken as given.
    assert verify_entries(lines, Trust(keys=keys_of(client))).ok


def resigned(lines: list[bytes], forger: Signer, cut: int) -> list[bytes]:
    """A forger's chain: the first ``cut`` entries kept, the rest rewritten and re-signed."""
    out = lines[:cut]
    prev = json.loads(lines[cut - 1])["entry_hash"] if cut else GENESIS_HASH
    for raw in lines[cut:]:
        entry = json.loads(raw)
        entry["outcome"]["victor"] = None
        entry["prev_hash"], entry["key_id"] = prev, forger.key_id
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(prev, body)
        entry["signature"] = forger.sign(entry["entry_hash"])
        prev = entry["entry_hash"]
        out.append(json.dumps(entry).encode())
    return out


def test_an_older_checkpoint_catches_rewrites_truncation_and_forks(
    client: httpx.Client, table: str
) -> None:
    roll(client, table, 4)
    old = client.get(f"/v1/tables/{table}/checkpoint").json()
    roll(client, table, 2)
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    anchor = [(old["size"], old["head_hash"])]
    assert verify_entries(lines, Trust(keys=None, anchors=anchor)).ok  # the honest table grew
    # Rewritten from seq 3 on (even re-signed by someone holding a key): caught at seq 4.
    rewritten = verify_entries(
        resigned(lines, Signer.generate(), 2), Trust(keys=None, anchors=anchor)
    )
    assert (rewritten.ok, rewritten.first_bad_seq) == (False, 4)
    # Truncated below the checkpoint.
    truncated = verify_entries(lines[:3], Trust(keys=None, anchors=anchor))
    assert (truncated.ok, truncated.first_bad_seq) == (False, 4)
    assert "truncated" in (truncated.reason or "")
    # A fork: a different chain of the same length from genesis.
    forked = verify_entries(resigned(lines, Signer.generate(), 0), Trust(keys=None, anchors=anchor))
    assert (forked.ok, forked.first_bad_seq) == (False, 4)


def test_cli_checks_checkpoints_and_receipts(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    first = roll(client, table, 3)
    (tmp_path / "checkpoint.json").write_text(client.get(f"/v1/tables/{table}/checkpoint").text)
    (tmp_path / "receipt.json").write_text(json.dumps(first[1]["receipt"]))
    (tmp_path / "keys.json").write_text(client.get("/v1/keys").text)
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    (tmp_path / "export.ndjson").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "short.ndjson").write_bytes(b"\n".join(lines[:2]) + b"\n")

    def verify(export: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "fairroll",
                "verify",
                str(tmp_path / export),
                "--keys",
                str(tmp_path / "keys.json"),
                "--checkpoint",
                str(tmp_path / "checkpoint.json"),
                "--receipt",
                str(tmp_path / "receipt.json"),
                "--root",
                TEST_ROOT,
            ],
            capture_output=True,
            text=True,
            check=False,
        )

    good = verify("export.ndjson")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "2 checkpoint(s)/receipt(s)" in good.stdout
    short = verify("short.ndjson")
    assert short.returncode == 1
    assert "FAIL at seq 3" in short.stdout


def test_checkpoint_signature_covers_its_text() -> None:
    signer = Signer.generate()
    checkpoint = sign_checkpoint(signer, "t", 7, b"\x07" * 32, "ab" * 32)
    key = signer.public_key.public_key
    assert verify_checkpoint(checkpoint, key)
    assert not verify_checkpoint(msgspec.structs.replace(checkpoint, head_hash="cd" * 32), key)
    assert not verify_checkpoint(msgspec.structs.replace(checkpoint, table="u"), key)
    assert not verify_checkpoint(msgspec.structs.replace(checkpoint, size=8), key)
    forged_text = checkpoint.text.replace("\n7\n", "\n8\n")
    assert not verify_checkpoint(msgspec.structs.replace(checkpoint, text=forged_text), key)


def test_verify_endpoint_checks_an_uploaded_export(client: httpx.Client, table: str) -> None:
    rolls = roll(client, table, 3)
    export = client.get(f"/v1/tables/{table}/export").content
    receipt = rolls[1]["receipt"]
    good = client.post(
        "/v1/verify",
        content=export,
        headers={"content-type": "application/x-ndjson"},
        params={"anchor": f"{receipt['seq']}:{receipt['entry_hash']}"},
    ).json()
    assert (good["ok"], good["entries"], good["signatures_checked"]) == (True, 3, True)
    lines = export.splitlines()
    tampered = lines[1].replace(b'"victory_levels":false', b'"victory_levels":true')
    bad = client.post(
        "/v1/verify",
        content=b"\n".join([lines[0], tampered, lines[2]]),
        headers={"content-type": "application/x-ndjson"},
    ).json()
    assert (bad["ok"], bad["first_bad_seq"]) == (False, 2)
