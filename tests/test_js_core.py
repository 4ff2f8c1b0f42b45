"""verify.js is the one JavaScript verification core, and as strict as ``fairroll verify``.

Each attack below is a log (or a note, or a receipt) an operator holding the real key can
make; verify.js must give the verdict the CLI gives, the same first bad seq, and a reason
holding the CLI's phrase (``python -m fairroll.cli verify --root <id>``). The logs are the
audit vectors' good log (``docs/vectors/log.ndjson``), rewritten and re-signed.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from fairroll.audit.entry import chain_hash
from fairroll.audit.signing import Signer, certify, load_signer
from support import fairroll_cli, run_node

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "docs" / "vectors"
VERIFY_JS = ROOT / "service" / "fairroll" / "page" / "static" / "verify.js"
#: The audit vectors' key (scripts/make_vectors.py): public on purpose, never deployed.
OPERATOR = load_signer(
    key=base64.b64encode(b"fairroll audit vectors key 00001").decode(), key_file=None, dev_dir=None
)
PINNED = OPERATOR.key_id
ATTACKER = load_signer(
    key=base64.b64encode(b"an attacker's own signing key 01").decode(), key_file=None, dev_dir=None
)
OTHER_ROOT = load_signer(
    key=base64.b64encode(b"another server's root key 000001").decode(), key_file=None, dev_dir=None
)
Log = list[dict[str, Any]]


def good_log() -> Log:
    return [json.loads(line) for line in (VECTORS / "log.ndjson").read_text().splitlines()]


def resigned(entries: Log, signer: Signer = OPERATOR, start: int = 0) -> Log:
    """Re-chained and re-signed from ``start`` by ``signer``: what a key holder can do."""
    out = copy.deepcopy(entries)
    for index in range(start, len(out)):
        entry = out[index]
        entry["prev_hash"] = out[index - 1]["entry_hash"] if index else "0" * 64
        entry["key_id"] = signer.key_id
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = signer.sign(entry["entry_hash"])
    return out


def self_certified() -> Log:
    """The whole log re-signed by the attacker's key, certified in entry 1 by itself."""
    log = good_log()
    log[0]["certificate"] = msgspec.to_builtins(certify(ATTACKER, ATTACKER.public_key.public_key))
    return resigned(log, ATTACKER)


def other_root() -> Log:
    """Re-signed by a key another root certifies (a real certificate, the wrong root)."""
    log = good_log()
    log[0]["certificate"] = msgspec.to_builtins(certify(OTHER_ROOT, ATTACKER.public_key.public_key))
    return resigned(log, ATTACKER)


def uncertified() -> Log:
    """Signed by the real key, but the log never publishes it under any root."""
    log = good_log()
    del log[0]["certificate"]
    return resigned(log)


def relabelled(source: str) -> Log:
    """The chosen-seed roll (seq 2) relabelled and re-signed."""
    log = good_log()
    log[1]["source"] = source
    return resigned(log, start=1)


def forked() -> Log:
    """A second entry at seq 6 (another outcome), chained after the first."""
    log = good_log()
    second = copy.deepcopy(log[5])
    second["outcome"] = {**second["outcome"], "forked": True}
    return resigned([*log[:6], second, *log[6:]], start=6)


ATTACKS = {
    "self-certified-key": self_certified,
    "key-certified-by-another-root": other_root,
    "no-key-certified": uncertified,
    "chosen-relabelled-statement": lambda: relabelled("statement"),
    "chosen-relabelled-seeded": lambda: relabelled("seeded"),
    "chosen-relabelled-fair": lambda: relabelled("fair"),
    "fork": forked,
    "deleted-entry": lambda: [e for e in good_log() if e["seq"] != 5],
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    """name -> (the CLI's verdict, verify.js's), for every attack and the good log."""
    folder = tmp_path_factory.mktemp("attacks")
    files = {"good": VECTORS / "log.ndjson"}
    for name, make in ATTACKS.items():
        files[name] = folder / f"{name}.ndjson"
        files[name].write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in make()))
    js = run_node(
        ROOT / "tests" / "js" / "verdict.mjs",
        VERIFY_JS,
        VECTORS / "keys.json",
        PINNED,
        *files.values(),
    )
    found = {}
    for (name, file), mine in zip(files.items(), js, strict=True):
        run = fairroll_cli("verify", "--root", PINNED, "--json", "--workers", "1", file)
        found[name] = (json.loads(run.stdout)["verification"], mine)
    return found


@pytest.mark.parametrize("name", ["good", *ATTACKS])
def test_verify_js_gives_the_clis_verdict_first_bad_seq_and_phrase(
    verdicts: dict[str, tuple[Any, Any]], name: str
) -> None:
    cli, mine = verdicts[name]
    assert mine["ok"] == cli["ok"], (cli, mine)
    assert mine["first_bad_seq"] == cli.get("first_bad_seq"), (cli, mine)
    if not cli["ok"]:
        assert cli["reason"] in mine["reason"], (cli, mine)


def test_a_reused_client_seed_verifies_but_is_not_fair() -> None:
    """docs/audit.md, row 13: a log that rolls Roth's second chain with the client seed the log
    showed before that chain was committed: ok, and not fair (the good log draws a new
    client seed per chain: nothing not fair)."""
    reused, good = run_node(
        ROOT / "tests" / "js" / "verdict.mjs",
        VERIFY_JS,
        VECTORS / "keys.json",
        PINNED,
        VECTORS / "cases" / "client-seed-reused-across-chains.ndjson",
        VECTORS / "log.ndjson",
    )
    assert good["ok"] is True and good["not_fair"] == []
    mine = reused
    assert mine["ok"] is True
    assert [n["seq"] for n in mine["not_fair"]] == [12]
    assert mine["not_fair"][0]["why"].startswith("client seed reused")


def test_no_pinned_root_is_not_verified() -> None:
    [mine] = run_node(
        ROOT / "tests" / "js" / "verdict.mjs",
        VERIFY_JS,
        VECTORS / "keys.json",
        "",
        VECTORS / "log.ndjson",
    )
    assert mine["ok"] is False and mine["verified"] is False
    assert mine["reason"].startswith("NOT VERIFIED")


def _bad_line_after(text: str, signature_bytes: int) -> str:
    """A signature line of the note's first key, its key hash kept, its signature broken."""
    lines = text.rstrip("\n").split("\n")
    line = next(li for li in lines if li.startswith("\u2014 "))
    name, encoded = line[2:].split(" ")
    raw = bytearray(base64.b64decode(encoded))
    raw[-1] ^= 1
    assert len(raw) == signature_bytes
    return f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}"


def test_notes_and_receipts_are_held_as_sumdb_note_holds_them(tmp_path: Path) -> None:
    """A known key's failing line rejects the note, after a good one or before it; a
    receipt re-signed under another table's origin is refused; and the keys are the
    pinned root's only."""
    keys = json.loads((VECTORS / "keys.json").read_text())
    checkpoint = json.loads((VECTORS / "checkpoint.json").read_text())
    receipts = json.loads((VECTORS / "receipts.json").read_text())
    log = good_log()
    text = checkpoint["text"]
    bad = _bad_line_after(text, 68)
    good_then_bad = {**checkpoint, "text": f"{text}{bad}\n"}
    body, signatures = text.split("\n\n")
    bad_then_good = {**checkpoint, "text": f"{body}\n\n{bad}\n{signatures}"}
    receipt = receipts["receipts"][4]
    size = receipt["tree_size"]
    root = base64.b64decode(receipt["checkpoint"].split("\n")[2])
    head = receipt["checkpoint"].split("\n")[3].removeprefix("chain ")
    elsewhere = sign_checkpoint(OPERATOR, "another-table", size, root, head)
    player = Ed25519PrivateKey.from_private_bytes(b"a player's own cosigning key 001")
    vkey = verifier_key("bob.players.example", raw_public_key(player))
    line = cosign(text, "bob.players.example", player, 1_700_000_000)
    broken = _bad_line_after(f"{body}\n\n{line}\n", 76)
    cases = {
        "checkpoint": {
            "kind": "checkpoint",
            "keys": keys,
            "root": PINNED,
            "checkpoint": checkpoint,
            "table": "vectors",
        },
        "good-then-bad": {
            "kind": "checkpoint",
            "keys": keys,
            "root": PINNED,
            "checkpoint": good_then_bad,
        },
        "bad-then-good": {
            "kind": "checkpoint",
            "keys": keys,
            "root": PINNED,
            "checkpoint": bad_then_good,
        },
        "another-table": {
            "kind": "checkpoint",
            "keys": keys,
            "root": PINNED,
            "checkpoint": checkpoint,
            "table": "other",
        },
        "other-root": {
            "kind": "checkpoint",
            "keys": keys,
            "root": OTHER_ROOT.key_id,
            "checkpoint": checkpoint,
        },
        "receipt": {
            "kind": "receipt",
            "keys": keys,
            "root": PINNED,
            "entry": log[4],
            "receipt": receipt,
        },
        "receipt-other-origin": {
            "kind": "receipt",
            "keys": keys,
            "root": PINNED,
            "entry": log[4],
            "receipt": {**receipt, "checkpoint": elsewhere.text},
        },
        "cosigned": {"kind": "cosignature", "note": f"{text}{line}\n", "vkey": vkey},
        "cosigned-good-then-bad": {
            "kind": "cosignature",
            "note": f"{text}{line}\n{broken}\n",
            "vkey": vkey,
        },
        "cosigned-bad-then-good": {
            "kind": "cosignature",
            "note": f"{text}{broken}\n{line}\n",
            "vkey": vkey,
        },
    }
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    said = run_node(ROOT / "tests" / "js" / "notes.mjs", VERIFY_JS, tmp_path / "cases.json")
    assert said["checkpoint"] == said["receipt"] == said["cosigned"] == "", said
    assert "does not verify" in said["good-then-bad"], said
    assert "does not verify" in said["bad-then-good"], said
    assert "origin" in said["another-table"] and "origin" in said["receipt-other-origin"], said
    assert "unknown key" in said["other-root"], said
    assert "does not verify" in said["cosigned-good-then-bad"], said
    assert "does not verify" in said["cosigned-bad-then-good"], said


def test_a_float_literal_is_refused_by_both_cores_at_its_seq(tmp_path: Path) -> None:
    """``"v": 2.0`` is the integer 2 to ``JSON.parse`` but a float to Python: an entry
    holds integers only (RFC 8785 form), so both cores refuse the line, at its seq (an
    outside attack suite's probe: verify.js took it, the Python core did not)."""
    from fairroll.audit.verify import Trust, verify_entries  # noqa: PLC0415

    lines = (VECTORS / "log.ndjson").read_text().splitlines()
    assert lines[2].endswith('"v":2}')
    lines[2] = lines[2].removesuffix('"v":2}') + '"v":2.0}'
    forged = tmp_path / "float.ndjson"
    forged.write_text("".join(line + "\n" for line in lines))
    report = verify_entries(forged.read_bytes().splitlines(), Trust(keys=None, root=PINNED))
    assert (report.ok, report.first_bad_seq) == (False, 3), report
    [mine] = run_node(
        ROOT / "tests" / "js" / "verdict.mjs", VERIFY_JS, VECTORS / "keys.json", PINNED, forged
    )
    assert (mine["ok"], mine["first_bad_seq"]) == (False, 3), mine
    assert "no floats" in mine["reason"]
