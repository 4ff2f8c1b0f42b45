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
import copy
import hashlib
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
from fairroll.randomness import committed_seed, derive_face
from support import TEST_ROOT, TEST_SIGNING_KEY, run_node

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


# The JavaScript core (verify.js and verify/), the page's and the npm client's verifier:
# every row of the checks table, held to the Python core's verdict, first bad seq and
# words. Offline: the vectors' log re-signed with the vectors' key (public on purpose).

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "docs" / "vectors"
VERIFY_JS = ROOT / "service" / "fairroll" / "page" / "static" / "verify.js"
VECTOR_SIGNER = load_signer(
    key=base64.b64encode(b"fairroll audit vectors key 00001").decode(), key_file=None, dev_dir=None
)
VECTOR_ROOT = VECTOR_SIGNER.key_id


def vector_log() -> Log:
    return [json.loads(line) for line in (VECTORS / "log.ndjson").read_text().splitlines()]


def vector_resigned(entries: Log, start: int = 0) -> Log:
    """Re-chained and re-signed from ``start`` with the vectors' key."""
    out = copy.deepcopy(entries)
    for index in range(start, len(out)):
        entry = out[index]
        entry["prev_hash"] = out[index - 1]["entry_hash"] if index else GENESIS_HASH
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = VECTOR_SIGNER.sign(entry["entry_hash"])
    return out


def both_cores(tmp_path: Path, lines: list[str]) -> tuple[Any, Any]:
    """(the Python core's report, verify.js's verdict) on one export, under the pinned root."""
    export = tmp_path / "export.ndjson"
    export.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    report = verify_entries(export.read_bytes().splitlines(), Trust(keys=None, root=VECTOR_ROOT))
    [mine] = run_node(JS / "verdict.mjs", VERIFY_JS, VECTORS / "keys.json", VECTOR_ROOT, export)
    return report, mine


def dumps(entry: Any) -> str:
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False)


JS = ROOT / "tests" / "js"


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(entry: dict[str, Any]) -> None:
        *parents, last = path
        at: Any = entry
        for key in parents:
            at = at[key]
        if value is _GONE:
            del at[last]
        else:
            at[last] = value

    return change


_GONE = object()

#: (entry index, change, after signing): each field of an entry and of each statement
#: kind typed as the Python core requires (its entries.py, sessions.py, trust.py).
MISTYPED = {
    "seq-a-string": (2, _set(("seq",), "3"), False),
    "v-a-boolean": (2, _set(("v",), True), False),
    "time-a-number": (0, _set(("time",), 5), False),
    "dice-an-object": (1, _set(("dice",), {}), False),
    "key-id-missing": (3, _set(("key_id",), _GONE), True),
    "signature-a-list": (3, _set(("signature",), []), True),
    "certificate-a-string": (0, _set(("certificate",), "x"), False),
    "die-sides-a-string": (1, _set(("dice", 0, "sides"), "20"), False),
    "session-nonce-a-string": (4, _set(("session", "nonce"), "1"), False),
    "commit-request-a-list": (3, _set(("request",), []), False),
    "commit-seed-id-a-number": (3, _set(("request", "seed_id"), 4), False),
    "chain-of-no-links": (7, _set(("request", "length"), 0), False),
    "reveal-rolls-a-string": (6, _set(("request", "rolls"), "2"), False),
    "renewal-without-previous": (10, _set(("request", "previous"), _GONE), False),
}


@pytest.mark.parametrize("name", sorted(MISTYPED))
def test_verify_js_types_every_field_as_the_python_core(tmp_path: Path, name: str) -> None:
    """A field of the wrong type (or missing) is a bad entry for both cores, at the same
    seq, in the same words; the old verify.js took most of them (or threw)."""
    index, change, after = MISTYPED[name]
    log = vector_log()
    if not after:
        change(log[index])
    log = vector_resigned(log, index)
    if after:
        change(log[index])
    report, mine = both_cores(tmp_path, [dumps(e) for e in log])
    assert report.ok is False, name
    assert (mine["ok"], mine["first_bad_seq"]) == (False, report.first_bad_seq), (mine, report)
    assert report.reason in mine["reason"], (mine, report)


def test_verify_js_refuses_a_line_that_is_not_an_object_as_the_python_core(tmp_path: Path) -> None:
    lines = [dumps(e) for e in vector_log()[:3]] + ["[4]"]
    report, mine = both_cores(tmp_path, lines)
    assert (report.ok, report.first_bad_seq, report.reason) == (False, 4, "not a JSON object")
    assert (mine["ok"], mine["first_bad_seq"], mine["reason"]) == (False, 4, "not a JSON object")


@pytest.mark.parametrize("where", ["a string", "an object key"])
def test_a_lone_surrogate_is_refused_by_both_cores(tmp_path: Path, where: str) -> None:
    """A lone surrogate has no UTF-8: JSON.stringify writes it escaped (so a hash is
    defined) and TextEncoder writes U+FFFD (so two strings share dice); the operator seals
    the entry the JavaScript way. Python refuses it; verify.js now does too, at its seq
    (the old core said OK: the attack probe's
    ``test_a_lone_surrogate_is_refused_by_python_and_taken_by_verify_js``)."""
    log = vector_log()
    entry = log[-1]
    mark = "QQLONEQQ"
    if where == "a string":
        entry["time"] = mark
    else:
        entry["request"][mark] = 1
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    from fairroll.audit.entry import jcs  # noqa: PLC0415

    raw = jcs(body).replace(mark.encode(), b"\\ud800")
    entry["entry_hash"] = hashlib.sha256(bytes.fromhex(entry["prev_hash"]) + raw).hexdigest()
    entry["signature"] = VECTOR_SIGNER.sign(entry["entry_hash"])
    lines = [dumps(e) for e in log[:-1]] + [dumps(entry).replace(mark, "\\ud800")]
    report, mine = both_cores(tmp_path, lines)
    assert (report.ok, report.first_bad_seq) == (False, entry["seq"]), report
    assert (mine["ok"], mine["first_bad_seq"]) == (False, entry["seq"]), mine
    assert f"{where} holds a lone surrogate" in mine["reason"], mine
    assert report.reason in mine["reason"], (mine, report)


def test_verify_js_holds_every_kept_checkpoint_and_receipt_vector() -> None:
    """Kept checkpoints (``--checkpoint``, ``--since``) and receipts (``--receipt``)
    given to verifyLog: a fork against a kept root, a truncation against a kept
    checkpoint or receipt and two kept roots of one size are caught at the vectors' seq,
    with their words (the old core took no kept file: four of these said OK)."""
    said = run_node(JS / "kept_vectors.mjs", VERIFY_JS, VECTORS)
    cases = json.loads((VECTORS / "cases" / "index.json").read_text())["cases"]
    expect = {c["name"]: c["expect"] for c in cases if c["name"] in said}
    assert len(said) >= 8
    for name, verdict in said.items():
        want = expect[name]
        said_seq = (verdict["ok"], verdict["first_bad_seq"])
        assert said_seq == (want["ok"], want["first_bad_seq"]), name
        assert (want["reason"] or "") in verdict["reason"], (name, verdict)
        assert verdict["not_fair"] == want["not_fair"], name


def test_verify_js_refuses_a_kept_checkpoint_inside_a_lost_range(tmp_path: Path) -> None:
    """A kept checkpoint of a size an epoch declares lost saw entries the log no longer
    holds: both cores refuse it at the epoch's seq, naming the range (no forgery needed:
    the old core never compared it)."""
    case = VECTORS / "cases" / "epoch-declares-a-lost-range.ndjson"
    lines = case.read_text().splitlines()
    checkpoint = sign_checkpoint(VECTOR_SIGNER, "vectors", 5, bytes(32), "ab" * 32)
    kept_file = tmp_path / "kept.json"
    kept_file.write_bytes(msgspec.json.encode(checkpoint))
    trust = Trust(
        keys=None,
        root=VECTOR_ROOT,
        anchors=[(5, checkpoint.head_hash)],
        roots=[(5, bytes(32))],
    )
    report = verify_entries([line.encode() for line in lines], trust)
    [mine] = run_node(
        JS / "verdict.mjs", VERIFY_JS, VECTORS / "keys.json", VECTOR_ROOT, case, "--kept", kept_file
    )
    assert (report.ok, report.first_bad_seq) == (False, 7), report
    assert (mine["ok"], mine["first_bad_seq"]) == (False, 7), mine
    assert "declares seqs 4..6 lost" in mine["reason"] and report.reason == mine["reason"]
    assert mine["lost"] == [
        {"epoch_seq": 7, "lost_after": 3, "resume_after": 6, "reason": "a Redis failover"}
    ]


def test_a_client_seed_on_a_second_chain_is_not_fair_in_verify_js(tmp_path: Path) -> None:
    """docs/audit.md, row 21: a client seed belongs to one chain. The vectors' log reordered:
    the hash chain is committed, rolled once with client seed X, then the commit-reveal
    session (committed before X was seen, so rule 1 does not apply) rolls with X too: it
    verifies, but is not fair, naming the first use (the old core said fair)."""
    log = vector_log()
    by_seq = {e["seq"]: e for e in log}
    reused = by_seq[9]["session"]["client_seed"]
    server_seed = by_seq[7]["request"]["server_seed"]
    roll = copy.deepcopy(by_seq[5])
    roll["session"]["client_seed"] = reused
    seed = committed_seed(server_seed, reused, 1)
    for position, die in enumerate(roll["dice"]):
        die["face"] = derive_face(seed.encode(), position, die["sides"])
    order = [by_seq[s] for s in (1, 2, 3, 4, 8, 9)] + [roll, by_seq[6], by_seq[7]]
    order = copy.deepcopy(order)
    for seq, entry in enumerate(order, start=1):
        entry["seq"] = seq
    log = vector_resigned(order)
    _, mine = both_cores(tmp_path, [dumps(e) for e in log])
    assert mine["ok"] is True, mine
    [item] = mine["not_fair"]
    assert item["seq"] == 7
    assert item["why"].startswith("client seed reused"), item
    assert "seq 6" in item["why"] and "another chain" in item["why"], item


def test_the_live_path_keeps_a_checkpoint_and_hands_back_words_apart(
    live_server: Any, table: str
) -> None:
    """docs/audit.md, rows 22 and 23, in the live path of the JavaScript core (the page's and
    the npm client's): a roll's answer hands back what was checked (the log's dice and
    outcome) apart from the server's words; the session keeps the last checkpoint it
    verified, and a receipt whose note is not consistent with it (a forked tree shown to
    this player) is refused (the old core had no kept checkpoint, and handed the words
    back as the answer)."""
    said = run_node(JS / "live_kept.mjs", VERIFY_JS, live_server.url, TEST_ROOT, table)
    rolled = said["rolled"]
    assert said["opened"]["size"] >= 1
    assert rolled["verdict"]["verified"] is True
    assert rolled["checked"] == rolled["entry"], rolled
    assert isinstance(rolled["serverWords"]["text"], str)
    assert rolled["kept"]["size"] > said["opened"]["size"]
    assert said["forked"]["refused"] is True, said
    refusal = said["forked"]["message"]
    assert "not consistent with the checkpoint this client verified last" in refusal, refusal


def _note_cases() -> dict[str, str]:
    """The vectors' checkpoint note, bent in each way ``note.open_note`` refuses."""
    text = json.loads((VECTORS / "checkpoint.json").read_text())["text"]
    body, block = text.split("\n\n")
    line = block.rstrip("\n")
    name, encoded = line[2:].split(" ")
    junk = base64.b64encode(bytes(68)).decode()
    short = base64.b64encode(bytes(4)).decode()
    return {
        "a line that is no signature line": f"{text}hello\n",
        "a name holding a plus": f"{text}\u2014 a+b {junk}\n",
        "a signature without its padding": f"{body}\n\n\u2014 {name} {encoded.rstrip('=')}\n",
        "a signature line of four bytes": f"{text}\u2014 other {short}\n",
        "more than a hundred signature lines": text + f"\u2014 other {junk}\n" * 100,
        "no newline after the last line": text.rstrip("\n"),
        "no signature block": f"{body}\n",
    }


def test_verify_js_opens_notes_as_strictly_as_note_py(tmp_path: Path) -> None:
    """Every rule ``open_note`` enforces (signature lines only, a name with no space or
    '+', strict base64, a key hash and a signature, at most a hundred lines, the block
    ending in a newline) refuses a checkpoint's note in verify.js too (one ``openNote``
    opens checkpoints, receipts and cosigned notes); the old core skipped lines it could
    not read and took such notes."""
    from fairroll.audit.checkpoint import NoteError, open_note  # noqa: PLC0415

    served = json.loads((VECTORS / "keys.json").read_text())
    checkpoint = json.loads((VECTORS / "checkpoint.json").read_text())
    public_key = next(k["public_key"] for k in served["keys"] if k["key_id"] == VECTOR_ROOT)
    cases = {}
    for why, note in _note_cases().items():
        with pytest.raises(NoteError):
            open_note(note, "fairroll", public_key)
        cases[why] = {
            "kind": "checkpoint",
            "keys": served,
            "root": VECTOR_ROOT,
            "checkpoint": {**checkpoint, "text": note},
        }
    cases["the note as it is"] = {**cases[why], "checkpoint": checkpoint}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    said = run_node(JS / "notes.mjs", VERIFY_JS, tmp_path / "cases.json")
    assert said.pop("the note as it is") == "", said
    assert all(said.values()), said  # each refused, with its words


def test_verify_js_names_a_first_entry_off_the_genesis_hash_as_the_python_core(
    tmp_path: Path,
) -> None:
    log = vector_log()
    log[0]["prev_hash"] = "11" * 32
    body = {k: v for k, v in log[0].items() if k not in ("entry_hash", "signature")}
    log[0]["entry_hash"] = chain_hash(log[0]["prev_hash"], body)
    log[0]["signature"] = VECTOR_SIGNER.sign(log[0]["entry_hash"])
    log = vector_resigned(log, 1)
    report, mine = both_cores(tmp_path, [dumps(e) for e in log])
    assert (report.ok, report.first_bad_seq) == (False, 1), report
    assert report.reason == "the first entry does not chain on the genesis hash"
    assert (mine["ok"], mine["first_bad_seq"]) == (False, 1), mine
    assert report.reason in mine["reason"], mine


def test_a_chain_roll_at_the_largest_nonce_is_refused_at_once_from_the_middle() -> None:
    """Read from the middle of a log, a hash-chain roll is checked alone: its link hashed
    back to the anchor, one step a nonce. At the largest integer nonce that never ended
    (both cores); no chain has more than ``MAX_LENGTH`` links, so past that it is bad at
    once. The full log's case is the vector ``chain-nonce-far-past-any-chain``."""
    program = (
        "from fairroll.audit.verify.sessions import Sessions\n"
        "from fairroll.audit.verify.checks import BadEntryError\n"
        "s = Sessions(partial=True, reveals={}, dice=lambda *a: None, check_now=lambda *a: None)\n"
        "ref = {'seed_id': 'sFarFarAwayChain1', 'commitment': 'ab' * 32, 'client_seed': 'c',\n"
        "       'nonce': 2**53 - 1, 'link': 'cd' * 32, 'first_nonce': 1}\n"
        "try:\n"
        "    s.committed({'seq': 40, 'session': ref, 'mechanic': 'tft.contest'})\n"
        "except BadEntryError as bad:\n"
        "    print(bad)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert "past its chain's 10000 links" in done.stdout, done.stdout + done.stderr
