"""The audit vectors in docs/vectors/ are current, and every verifier gets them right:
``verify_entries`` (the library), ``fairroll verify`` (the CLI), ``POST /v1/verify``, the
stdlib-only ``scripts/verify_roll.py`` and the in-page ``verify.js``; the checkpoint and
proofs by ``merkle``, the JCS cases by ``jcs`` and the independent ``rfc8785``; the
receipts and cosignatures by the library and ``verify.js`` (and by Go's sumdb code in
``test_transparency``)."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import Checkpoint, Trust, merkle, verify_checkpoint, verify_entries
from fairroll.audit.checkpoint import (
    InvalidSignatureError,
    MalformedNoteError,
    UnverifiedNoteError,
    open_note,
)
from fairroll.audit.cosignature import (
    CosignatureError,
    ForgedCosignatureError,
    NoCosignatureError,
    VerifierKeyError,
    cosign,
    open_cosignature,
    verifier_key,
)
from fairroll.audit.entry import jcs
from fairroll.audit.receipts import ReceiptError, equivocation, trusted_keys, verify_receipt
from fairroll.audit.signing import CertificateError, PublicKey, load_signer
from fairroll.audit.verify import VerifiedState, verify_run
from fairroll.mechanics import replay_entry
from support import run_node

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "docs" / "vectors"
KEYS = json.loads((VECTORS / "keys.json").read_text())
PINNED = KEYS["root"]
EXPECTED = json.loads((VECTORS / "bad" / "expected.json").read_text())
CASES = json.loads((VECTORS / "cases" / "index.json").read_text())["cases"]
LOG = (VECTORS / "log.ndjson").read_bytes()
ROOT_HASH = json.loads((VECTORS / "proofs.json").read_text())["roots"]["12"]
RECEIPTS = json.loads((VECTORS / "receipts.json").read_text())
COSIGNED = json.loads((VECTORS / "cosignatures.json").read_text())
WITNESSED = json.loads((VECTORS / "witness.json").read_text())


def test_the_vectors_are_current(tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in VECTORS.rglob("*") if p.is_file()}
    subprocess.run(
        [sys.executable, ROOT / "scripts" / "make_vectors.py"], check=True, capture_output=True
    )
    after = {p: p.read_bytes() for p in VECTORS.rglob("*") if p.is_file()}
    assert before == after, "docs/vectors drifted: run python scripts/make_vectors.py"


def test_the_library_and_the_cli_verify_the_log_and_name_each_forgery(tmp_path: Path) -> None:
    report = verify_entries(LOG.splitlines(), Trust(keys=None, root=PINNED), replay=replay_entry)
    assert report.ok and report.root_hash == ROOT_HASH and report.entries == 12
    assert report.sources == {"drawn": 1, "chosen": 1, "supplied": 1, "committed": 5}
    for name, want in EXPECTED.items():
        lines = (VECTORS / "bad" / f"{name}.ndjson").read_bytes().splitlines()
        bad = verify_entries(lines, Trust(keys=None, root=PINNED), replay=replay_entry)
        assert (bad.ok, bad.first_bad_seq) == (False, want["first_bad_seq"]), name
        assert want["reason"] in (bad.reason or ""), (name, bad.reason)
    cli = [sys.executable, "-m", "fairroll.cli", "verify", "--root", PINNED]
    ok = subprocess.run([*cli, VECTORS / "log.ndjson"], capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and f"Merkle root at size 12: {ROOT_HASH}" in ok.stdout, ok.stdout
    assert "1 chosen roll(s): reproducible, not fair" in ok.stdout
    for name, want in EXPECTED.items():
        failed = subprocess.run(
            [*cli, VECTORS / "bad" / f"{name}.ndjson"], capture_output=True, text=True, check=False
        )
        assert failed.returncode == 1
        assert f"FAIL at seq {want['first_bad_seq']}:" in failed.stdout, (name, failed.stdout)


def test_the_stdlib_script_verifies_the_log_and_names_each_forgery() -> None:
    script = [sys.executable, ROOT / "scripts" / "verify_roll.py", "--root", PINNED, "--export"]
    ok = subprocess.run(
        [*script, VECTORS / "log.ndjson"], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0 and f"Merkle root {ROOT_HASH}" in ok.stdout, ok.stdout
    for name, want in EXPECTED.items():
        failed = subprocess.run(
            [*script, VECTORS / "bad" / f"{name}.ndjson"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert failed.returncode == 1
        assert f"FAIL at seq {want['first_bad_seq']}:" in failed.stdout, (name, failed.stdout)
        assert want["reason"] in failed.stdout, (name, failed.stdout)


def test_the_verify_endpoint_verifies_the_log_and_names_each_forgery(client: httpx.Client) -> None:
    def upload(body: bytes) -> Any:
        answer = client.post(
            "/v1/verify",
            params={"root": PINNED},
            content=body,
            headers={"Content-Type": "application/x-ndjson"},
        )
        assert answer.status_code == 200, answer.text
        return answer.json()

    assert upload(LOG)["ok"] is True
    for name, want in EXPECTED.items():
        report = upload((VECTORS / "bad" / f"{name}.ndjson").read_bytes())
        assert (report["ok"], report["first_bad_seq"]) == (False, want["first_bad_seq"]), name


def test_the_page_verifier_gets_every_vector_right() -> None:
    seen = run_node(
        ROOT / "tests" / "js" / "verify_vectors.mjs",
        ROOT / "service" / "fairroll" / "page" / "static" / "verify.js",
        VECTORS,
    )
    assert seen["good"]["seq"] is None and seen["good"]["root"] == ROOT_HASH, seen["good"]
    assert "reproducible, not fair" in seen["good"]["proves"][1]
    for name, want in EXPECTED.items():
        assert seen["bad"][name]["seq"] == want["first_bad_seq"], (name, seen["bad"][name])
        assert want["reason"] in seen["bad"][name]["reason"], (name, seen["bad"][name])
    assert seen["size"] == 12 and set(seen["consistency"]) == {""}
    assert "does not verify" in seen["forged"]
    assert all(seen["jcs"])
    assert seen["receipts"] == [""] * 12
    for item in RECEIPTS["bad"]:
        assert item["reason"] in seen["badReceipts"][item["name"]], (item, seen["badReceipts"])
    assert seen["cosignature"]["time"] == COSIGNED["time"]
    assert set(seen["cosignature"]["bad"]) == set(COSIGNED["bad"])
    assert all(seen["cosignature"]["bad"].values()), seen["cosignature"]


def test_every_receipt_and_cosignature_vector_by_the_library() -> None:
    trusted = trusted_keys(KEYS, PINNED)
    log = [json.loads(line) for line in LOG.splitlines()]
    notes = {r["checkpoint"] for r in RECEIPTS["receipts"]}
    assert len(RECEIPTS["receipts"]) == 12 and len(notes) == 2  # one note per round
    for receipt in RECEIPTS["receipts"]:
        assert verify_receipt(log[receipt["seq"] - 1], receipt, trusted)[0] == receipt["tree_size"]
    for item in RECEIPTS["bad"]:
        with pytest.raises(ReceiptError, match=item["reason"]):
            verify_receipt(log[item["entry_seq"] - 1], item["receipt"], trusted)
    assert open_cosignature(COSIGNED["cosigned"], COSIGNED["vkey"]) == COSIGNED["time"]
    raw = base64.b64decode(COSIGNED["public_key"])
    assert verifier_key(COSIGNED["name"], raw) == COSIGNED["vkey"]
    for note in COSIGNED["bad"].values():
        with pytest.raises(CosignatureError):
            open_cosignature(note, COSIGNED["vkey"])


def test_each_refusal_of_a_note_is_told_by_its_type_not_its_words() -> None:
    """A caller picks its answer (reject the note, try the next key, blame the vkey) by
    the error's type: a forged line of a known key, no line of it, not a note at all.
    Words were matched before; a cosigner named "key" then had its forged cosignature
    answered as a bad verifier key."""
    checkpoint = json.loads((VECTORS / "checkpoint.json").read_text())
    note, key = checkpoint["text"], KEYS["keys"][0]["public_key"]
    assert open_note(note, "fairroll", key)[0] == 12
    forged = note.replace("\n12\n", "\n13\n", 1)
    with pytest.raises(InvalidSignatureError):
        open_note(forged, "fairroll", key)
    with pytest.raises(UnverifiedNoteError):
        open_note(note, "another-log", key)
    with pytest.raises(MalformedNoteError):
        open_note(note.replace("\n\n", "\n", 1), "fairroll", key)
    vkey = COSIGNED["vkey"]
    bad = COSIGNED["bad"]
    with pytest.raises(ForgedCosignatureError):
        open_cosignature(bad["time-altered"], vkey)
    with pytest.raises(ForgedCosignatureError):
        open_cosignature(bad["body-altered"], vkey)
    with pytest.raises(NoCosignatureError):
        open_cosignature(bad["signed-by-another-key"], vkey)
    with pytest.raises(VerifierKeyError):
        open_cosignature(COSIGNED["cosigned"], vkey.replace("+", "-", 1))
    private = Ed25519PrivateKey.from_private_bytes(base64.b64decode(COSIGNED["private_key"]))
    named_key = verifier_key("key", private.public_key().public_bytes_raw())
    line = cosign(note, "key", private, COSIGNED["time"])
    stamped = base64.b64decode(line.rsplit(" ", 1)[1])
    late = stamped[:4] + (COSIGNED["time"] + 1).to_bytes(8, "big") + stamped[12:]
    with pytest.raises(ForgedCosignatureError) as refused:
        open_cosignature(f"{note}\u2014 key {base64.b64encode(late).decode()}\n", named_key)
    assert not isinstance(refused.value, VerifierKeyError)
    # A signing key's certificate that is not one, or is another key's: its own type.
    vector_key = base64.b64encode(b"fairroll audit vectors key 00001").decode()
    other = json.dumps(KEYS["keys"][0]["certificate"])
    b64_zero = base64.b64encode(bytes(32)).decode()
    for certificate in ("{}", "not json", other):
        with pytest.raises(CertificateError):
            load_signer(key=b64_zero, key_file=None, dev_dir=None, certificate=certificate)
    signer = load_signer(key=vector_key, key_file=None, dev_dir=None, certificate=other)
    assert signer.key_id == PINNED


def test_a_retired_key_opens_only_notes_signed_before_its_retirement_in_the_log() -> None:
    """Retirement is a log position for receipts and checkpoints too, as for entries: a
    key retired by the ``key.retire`` at seq R opens a note of a size below R only (a
    note of R entries or more covers its retirement: it was signed after it). A key the
    live ``GET /v1/keys`` answer marks retired (``not_after``), at no seq the caller
    gives, opens none: a retired key signs nothing new (it was retired because it may be
    in other hands)."""
    log = [json.loads(line) for line in LOG.splitlines()]
    early, late = RECEIPTS["receipts"][0], RECEIPTS["receipts"][-1]
    assert (early["tree_size"], late["tree_size"]) == (5, 12)
    listed = copy.deepcopy(KEYS)
    listed["keys"][0]["not_after"] = "2026-12-02T00:00:00.000Z"
    key_id = listed["keys"][0]["key_id"]
    for receipt in (early, late):
        with pytest.raises(ReceiptError, match="retired"):
            verify_receipt(log[receipt["seq"] - 1], receipt, trusted_keys(listed, PINNED))
    placed = trusted_keys(listed, PINNED, retired={key_id: 6})
    assert verify_receipt(log[early["seq"] - 1], early, placed)[0] == 5
    with pytest.raises(ReceiptError, match="retired at seq 6"):
        verify_receipt(log[late["seq"] - 1], late, placed)
    later = trusted_keys(listed, PINNED, retired={key_id: 13})
    assert verify_receipt(log[late["seq"] - 1], late, later)[0] == 12
    with pytest.raises(ReceiptError, match="retired"):
        equivocation(early["checkpoint"], late["checkpoint"], placed)
    assert not equivocation(early["checkpoint"], late["checkpoint"], later).proven


@pytest.mark.parametrize(
    "name",
    [c["name"] for c in CASES if c["class"] == "client seeds"],
)
def test_a_verification_resumed_mid_log_keeps_each_client_seeds_chains(name: str) -> None:
    """The state a verification goes on from (the server keeps it between polls) holds
    each client seed's chains: resumed at every seq, the client-seed vectors give the
    not-fair seqs they give read whole ("a client seed belongs to one chain")."""
    case = next(c for c in CASES if c["name"] == name)
    lines = (VECTORS / case["inputs"]["log"]).read_bytes().splitlines()
    trust = Trust.rooted(msgspec.convert(KEYS["keys"], list[PublicKey]), PINNED)
    for cut in range(1, len(lines)):
        report, state = verify_run(lines[:cut], trust)
        assert state is not None, report
        kept = msgspec.json.decode(msgspec.json.encode(state), type=VerifiedState)
        report, _ = verify_run(lines[cut:], trust, resume=kept)
        assert report.ok, report
        assert [n.seq for n in report.not_fair] == case["expect"]["not_fair"], (cut, report)


def test_the_checkpoint_proofs_and_jcs_cases() -> None:
    checkpoint = msgspec.json.decode((VECTORS / "checkpoint.json").read_bytes(), type=Checkpoint)
    key = KEYS["keys"][0]["public_key"]
    assert verify_checkpoint(checkpoint, key) and checkpoint.root_hash == ROOT_HASH
    proofs = json.loads((VECTORS / "proofs.json").read_text())
    root = base64.b64decode(ROOT_HASH)
    for item in proofs["inclusion"]:
        leaf = base64.b64decode(proofs["leaves"][item["seq"] - 1])
        hashes = [base64.b64decode(h) for h in item["proof"]]
        merkle.verify_inclusion(item["seq"] - 1, item["size"], leaf, hashes, root)
    for item in proofs["consistency"]:
        old = base64.b64decode(proofs["roots"][str(item["from"])])
        merkle.verify_consistency(
            item["from"], item["to"], old, root, [base64.b64decode(h) for h in item["proof"]]
        )
    for case in json.loads((VECTORS / "jcs.json").read_text()):
        assert jcs(case["value"]).decode() == case["canonical"]
        assert rfc8785.dumps(case["value"]).decode() == case["canonical"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_forgery_has_its_file(name: str) -> None:
    assert (VECTORS / "bad" / f"{name}.ndjson").exists()


def test_the_witness_vector_is_answered_to_the_byte() -> None:
    """A fresh ``fairroll witness`` answers the vector's add-checkpoint requests, in
    order, with the status, content type and body the vector holds."""
    import asyncio  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    from fairroll.witness import Witness, parse_log_key  # noqa: PLC0415

    origin, _, vkey = WITNESSED["log"].partition("=")
    key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(WITNESSED["private_key"]))
    with tempfile.TemporaryDirectory() as folder:
        witness = Witness(
            WITNESSED["name"],
            key,
            {origin: [parse_log_key(vkey)]},
            Path(folder) / "state.json",
            clock=lambda: WITNESSED["time"],
        )
        for step in WITNESSED["steps"]:
            said = asyncio.run(witness.add_checkpoint(step["request"]))
            assert (said.status, said.content_type, said.body) == (
                step["status"],
                step["content_type"],
                step["body"],
            )
    assert [s["status"] for s in WITNESSED["steps"]] == [200, 422, 200, 200, 400, 409, 422]
    for step in WITNESSED["steps"]:
        if step["status"] == 200:
            note = step["request"].partition("\n\n")[2]
            assert open_cosignature(note + step["body"], WITNESSED["vkey"]) == WITNESSED["time"]


def test_the_cli_never_counts_a_not_fair_roll_as_fair() -> None:
    """docs/audit.md: a roll named not fair is never called fair. The CLI's count of
    committed rolls once said "committed roll(s): fair" for every committed roll, the
    not-fair ones among them."""
    case = VECTORS / "cases" / "client-seed-reused-on-a-pre-committed-chain.ndjson"
    cli = [sys.executable, "-m", "fairroll.cli", "verify", "--root", PINNED, case]
    done = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 committed roll(s): NOT FAIR, each named below" in done.stdout, done.stdout
    assert "seq 5: NOT FAIR: client seed reused" in done.stdout, done.stdout
    fair = [line for line in done.stdout.splitlines() if "committed roll(s): fair" in line]
    assert [line.split(":")[0] for line in fair] == ["1 committed roll(s)"], done.stdout
