"""fairroll's log as the transparency world reads it: checkpoints, inclusion proofs and
consistency proofs checked by the Go checksum database's own code (Debian's golang-go and
golang-golang-x-mod-dev: ``sumdb/note`` and ``sumdb/tlog``, built here with no network),
leaf bytes written by an independent RFC 8785 implementation (``rfc8785``), and the
server's promise never to sign a checkpoint inconsistent with the last one."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import rfc8785
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from redis import Redis

from fairroll.audit import Signer, Trust, load_signer, merkle, verify_entries
from fairroll.audit.checkpoint import note_key, sign_checkpoint
from fairroll.audit.cosignature import cosign, open_cosignature, raw_public_key, verifier_key
from fairroll.audit.keyspace import log_key
from fairroll.audit.receipts import ReceiptError, trusted_keys, verify_receipt
from fairroll.redis_server import RedisServer, free_port
from support import TEST_SIGNING_KEY, LiveServer, fairroll_cli, run_node

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "tests" / "go" / "fairrollcheck"
GOPATH = Path("/usr/share/gocode")
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


@pytest.fixture(scope="session")
def go_checker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if (shutil.which("go") is None or not (GOPATH / "src/golang.org/x/mod").exists()) and (
        shutil.which("apt-get")
    ):
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "golang-go", "golang-golang-x-mod-dev"],
            check=False,
            timeout=600,
            capture_output=True,
        )
    go = shutil.which("go")
    assert go is not None, "Debian's golang-go is needed (apt-get install golang-go)"
    out = tmp_path_factory.mktemp("go") / "fairrollcheck"
    env = {
        **os.environ,
        "GO111MODULE": "off",  # GOPATH mode: Debian's packaged sources, no module download
        "GOPATH": str(GOPATH),
        "GOCACHE": str(out.parent / "cache"),
        "GOFLAGS": "",
    }
    subprocess.run(
        [go, "build", "-o", str(out), "."], cwd=CHECKER, env=env, check=True, timeout=300
    )
    return out


def go_check(checker: Path, request: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [str(checker)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def roll(client: httpx.Client, table: str, count: int) -> None:
    for _ in range(count):
        answer = client.post("/v1/tft/contests", json={**BODY, "table": table})
        assert answer.status_code == 200, answer.text


@pytest.fixture
def grown(client: httpx.Client, table: str) -> Iterator[dict[str, Any]]:
    """A table checkpointed at sizes 1, 3 and 7 (a seed session among its entries)."""
    checkpoints = {}
    roll(client, table, 1)
    checkpoints[1] = client.get(f"/v1/tables/{table}/checkpoint").json()
    seed_id = client.post(f"/v1/tables/{table}/seeds").json()["seed_id"]
    ref = {"seed_id": seed_id, "client_seed": "p"}
    assert client.post("/v1/tft/contests", json={**BODY, "table": table, "session": ref}).is_success
    checkpoints[3] = client.get(f"/v1/tables/{table}/checkpoint").json()
    roll(client, table, 3)
    client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal")
    checkpoints[7] = client.get(f"/v1/tables/{table}/checkpoint").json()
    keys = client.get("/v1/keys").json()["keys"]
    key_id = checkpoints[7]["key_id"]
    entries = [
        json.loads(line) for line in client.get(f"/v1/tables/{table}/export").content.splitlines()
    ]
    yield {
        "checkpoints": checkpoints,
        "vkey": next(k["note_key"] for k in keys if k["key_id"] == key_id),
        "entries": entries,
    }


def test_go_verifies_checkpoint_notes_and_every_proof(
    go_checker: Path, client: httpx.Client, table: str, grown: dict[str, Any]
) -> None:
    checkpoints, entries = grown["checkpoints"], grown["entries"]
    assert [c["size"] for c in checkpoints.values()] == [1, 3, 7]
    inclusion = []
    for size in (3, 7):
        for seq in range(1, size + 1):
            proof = client.get(
                f"/v1/tables/{table}/proofs/inclusion", params={"seq": seq, "size": size}
            ).json()
            # The leaf's bytes by an independent JCS implementation, not fairroll's.
            record = rfc8785.dumps(entries[seq - 1])
            leaf = base64.b64encode(merkle.leaf(record)).decode()
            assert proof["leaf_hash"] == leaf
            inclusion.append(
                {
                    "size": size,
                    "index": seq - 1,
                    "record": base64.b64encode(record).decode(),
                    "proof": proof["proof"],
                }
            )
    consistency = []
    for old, new in ((1, 3), (1, 7), (3, 7), (7, 7)):
        proof = client.get(
            f"/v1/tables/{table}/proofs/consistency", params={"from": old, "to": new}
        ).json()
        consistency.append({"from": old, "to": new, "proof": proof["proof"]})
    notes = [c["text"] for c in checkpoints.values()]
    note = client.get(f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"})
    assert note.headers["content-type"].startswith("text/plain")
    assert note.text == checkpoints[7]["text"]  # the same tree, signed again, same bytes
    result = go_check(
        go_checker,
        {
            "vkey": grown["vkey"],
            "checkpoints": notes,
            "inclusion": inclusion,
            "consistency": consistency,
        },
    )
    assert result["checkpoints"] == ["", "", ""]
    assert result["sizes"] == [1, 3, 7]
    assert set(result["inclusion"]) == {""}, result["inclusion"]
    assert set(result["consistency"]) == {""}, result["consistency"]


def test_a_receipts_leaf_hash_is_its_exported_entrys_leaf(client: httpx.Client, table: str) -> None:
    """The store hands the roll its leaf hash (computed for the tree) instead of encoding
    the entry again: it must be the leaf of the bytes the log exports, by an independent
    JCS, for a fresh roll, a committed roll and an Idempotency-Key retry alike."""
    headers = {"Idempotency-Key": "receipt-leaf"}
    fresh = client.post("/v1/tft/contests", json={**BODY, "table": table}, headers=headers)
    again = client.post("/v1/tft/contests", json={**BODY, "table": table}, headers=headers)
    seed_id = client.post(f"/v1/tables/{table}/seeds").json()["seed_id"]
    ref = {"seed_id": seed_id, "client_seed": "p"}
    committed = client.post("/v1/tft/contests", json={**BODY, "table": table, "session": ref})
    receipts = [answer.json()["receipt"] for answer in (fresh, again, committed)]
    assert receipts[0] == receipts[1]
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    for receipt in receipts:
        record = rfc8785.dumps(json.loads(lines[receipt["seq"] - 1]))
        assert receipt["leaf_hash"] == base64.b64encode(merkle.leaf(record)).decode()


def test_go_refuses_forged_notes_records_and_proofs(
    go_checker: Path, client: httpx.Client, table: str, grown: dict[str, Any]
) -> None:
    """The same checker is not a rubber stamp: each forgery is refused."""
    checkpoints, entries = grown["checkpoints"], grown["entries"]
    text = checkpoints[7]["text"]
    forged_size = text.replace("\n7\n", "\n8\n", 1)
    other_key = note_key("fairroll", Signer.generate().public_key.public_key)
    proof = client.get(f"/v1/tables/{table}/proofs/inclusion", params={"seq": 2, "size": 7}).json()
    edited = dict(entries[1], time="2020-01-01T00:00:00.000Z")
    consistency = client.get(
        f"/v1/tables/{table}/proofs/consistency", params={"from": 3, "to": 7}
    ).json()["proof"]
    forged_proof = [base64.b64encode(b"\x00" * 32).decode(), *consistency[1:]]
    result = go_check(
        go_checker,
        {
            "vkey": grown["vkey"],
            "checkpoints": [forged_size, checkpoints[3]["text"], text],
            "inclusion": [
                {
                    "size": 7,
                    "index": 1,
                    "record": base64.b64encode(rfc8785.dumps(edited)).decode(),
                    "proof": proof["proof"],
                },
                {
                    "size": 7,
                    "index": 2,  # the right record, claimed at another position
                    "record": base64.b64encode(rfc8785.dumps(entries[1])).decode(),
                    "proof": proof["proof"],
                },
            ],
            "consistency": [{"from": 3, "to": 7, "proof": forged_proof}],
        },
    )
    assert result["checkpoints"][0] != ""  # the size was changed under the signature
    assert result["checkpoints"][1:] == ["", ""]
    assert all(error for error in result["inclusion"])
    assert all(error for error in result["consistency"])
    unknown = go_check(go_checker, {"vkey": other_key, "checkpoints": [text]})
    assert unknown["checkpoints"][0] != ""


def test_the_server_never_signs_a_checkpoint_after_its_head_moved_back(
    redis_server: RedisServer, redis_client: Redis, tmp_path: Path, table: str
) -> None:
    """After the tail was deleted and the head moved back in Redis, a server (even a
    freshly started one, with nothing in memory) refuses to sign size 4 after size 5."""
    first = LiveServer(redis_server.url, tmp_path / "first.log")
    try:
        with httpx.Client(base_url=first.url, timeout=10) as client:
            roll(client, table, 5)
            receipts = client.get(f"/v1/tables/{table}/entries").json()["entries"]
            assert client.get(f"/v1/tables/{table}/checkpoint").json()["size"] == 5
    finally:
        first.stop()
    redis_client.xdel(f"fairroll:{{{table}}}:log", "5-0")
    redis_client.set(f"fairroll:{{{table}}}:head", f"4:{receipts[3]['entry_hash']}")
    tree = f"fairroll:{{{table}}}:tree"
    redis_client.set(tree, redis_client.getrange(tree, 0, merkle.stored_count(4) * 32 - 1))
    second = LiveServer(redis_server.url, tmp_path / "second.log")
    try:
        with httpx.Client(base_url=second.url, timeout=10) as client:
            refused = client.get(f"/v1/tables/{table}/checkpoint")
            assert refused.status_code == 503
            assert refused.json()["type"].endswith("table-stopped")
            assert "a checkpoint of size 5 was signed" in refused.json()["detail"]
            # Stopped: no roll is given seq 5 again either.
            assert client.post("/v1/tft/contests", json={**BODY, "table": table}).status_code == 503
    finally:
        second.stop()


def test_a_table_from_before_trees_gets_its_tree_built_from_its_entries(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    """A log without a tree (written before trees; here its tree deleted) gets its tree
    built from its entries on its next append: the append script sees the tree does not
    match the head and refuses, the server builds it, and the roll goes in."""
    roll(client, table, 3)
    redis_client.delete(f"fairroll:{{{table}}}:tree", f"fairroll:{{{table}}}:signed")
    roll(client, table, 1)
    assert redis_client.strlen(f"fairroll:{{{table}}}:tree") == merkle.stored_count(4) * 32
    export = client.get(f"/v1/tables/{table}/export").content.splitlines()
    report = verify_entries(export, Trust(keys=None))
    checkpoint = client.get(f"/v1/tables/{table}/checkpoint").json()
    assert report.ok and (checkpoint["size"], checkpoint["root_hash"]) == (4, report.root_hash)


def concurrent_rolls(url: str, table: str, count: int) -> list[dict[str, Any]]:
    """``count`` rolls sent at once, so rounds group several entries under one note."""

    async def run() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            body = {**BODY, "table": table}
            answers = await asyncio.gather(
                *(http.post("/v1/tft/contests", json=body) for _ in range(count))
            )
        assert all(a.status_code == 200 for a in answers)
        return [a.json() for a in answers]

    return asyncio.run(run())


def test_every_receipt_is_a_checkpoint_checked_alone_by_go_and_by_us(
    go_checker: Path, live_server: LiveServer, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """Each roll's receipt carries its round's signed note and its inclusion proof: with
    the entry, the keys and the pinned root it checks alone, in Go's sumdb code, in the
    library and in ``fairroll verify --entry``; one note signs a whole round."""
    answers = concurrent_rolls(live_server.url, table, 24)
    served = client.get("/v1/keys").json()
    keys = trusted_keys(served, served["root"])
    entries = {
        e["seq"]: e
        for e in map(json.loads, client.get(f"/v1/tables/{table}/export").content.splitlines())
    }
    inclusion, notes = [], []
    for answer in answers:
        receipt = answer["receipt"]
        entry = entries[receipt["seq"]]
        assert verify_receipt(entry, receipt, keys)[0] == receipt["tree_size"]
        notes.append(receipt["checkpoint"])
        inclusion.append(
            {
                "size": receipt["tree_size"],
                "index": receipt["seq"] - 1,
                "record": base64.b64encode(rfc8785.dumps(entry)).decode(),
                "proof": receipt["proof"],
            }
        )
    distinct = sorted(set(notes), key=notes.index)
    assert len(distinct) < len(answers)  # rounds of several rolls, one signature each
    key_id = answers[0]["receipt"]["key_id"]
    vkey = next(k["note_key"] for k in served["keys"] if k["key_id"] == key_id)
    # Go's checker takes one checkpoint per size: the rounds' notes, each its own size.
    seen = go_check(go_checker, {"vkey": vkey, "checkpoints": distinct, "inclusion": inclusion})
    assert seen["checkpoints"] == [""] * len(distinct)
    assert seen["inclusion"] == [""] * len(inclusion)
    # The CLI, from files a player kept.
    (tmp_path / "keys.json").write_text(json.dumps(served))
    (tmp_path / "answer.json").write_text(json.dumps(answers[0]))
    (tmp_path / "entry.json").write_text(json.dumps(entries[answers[0]["receipt"]["seq"]]))
    ran = fairroll_cli(
        "verify",
        "--entry",
        tmp_path / "entry.json",
        "--receipt",
        tmp_path / "answer.json",
        "--keys",
        tmp_path / "keys.json",
        "--root",
        served["root"],
    )
    assert ran.returncode == 0 and ran.stdout.startswith("OK: entry "), ran.stdout


def test_a_receipt_tampered_with_or_under_another_root_fails(
    live_server: LiveServer, client: httpx.Client, table: str
) -> None:
    answer = concurrent_rolls(live_server.url, table, 1)[0]
    served = client.get("/v1/keys").json()
    keys = trusted_keys(served, served["root"])
    entry = client.get(f"/v1/tables/{table}/entries/{answer['receipt']['seq']}").json()
    receipt = answer["receipt"]
    changed = {**entry, "time": "2020-01-01T00:00:00.000Z"}  # any byte of the entry
    wrong_proof = {**receipt, "proof": [base64.b64encode(b"\x00" * 32).decode()]}
    size = receipt["tree_size"]
    wrong_note = {
        **receipt,
        "checkpoint": receipt["checkpoint"].replace(f"\n{size}\n", f"\n{size + 1}\n"),
    }
    for bad_entry, bad_receipt, phrase in (
        (changed, receipt, "entry was changed"),
        (entry, wrong_proof, "proof"),
        (entry, wrong_note, "signature does not verify"),
    ):
        with pytest.raises(ReceiptError, match=phrase):
            verify_receipt(bad_entry, bad_receipt, keys)
    stranger = Signer.generate().key_id
    assert trusted_keys(served, stranger) == {}
    with pytest.raises(ReceiptError, match="not certified by the pinned root"):
        verify_receipt(entry, receipt, {})


def test_two_notes_of_one_size_prove_equivocation_to_anyone(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """The operator, holding the key, shows two players two trees of the same size: the
    two signed notes they received are a portable proof (exit 3, both notes printed)."""
    served = client.get("/v1/keys").json()
    honest = client.post("/v1/tft/contests", json={**BODY, "table": table}).json()["receipt"]
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    other = sign_checkpoint(operator, table, honest["tree_size"], b"\x07" * 32, "ab" * 32)
    (tmp_path / "keys.json").write_text(json.dumps(served))
    (tmp_path / "a.json").write_text(json.dumps({"receipt": honest}))
    (tmp_path / "b.txt").write_text(other.text)
    (tmp_path / "same.json").write_text(
        json.dumps(client.get(f"/v1/tables/{table}/checkpoint").json())
    )
    common = ("--keys", tmp_path / "keys.json", "--root", served["root"])
    caught = fairroll_cli(
        "verify", "--equivocation", tmp_path / "a.json", tmp_path / "b.txt", *common
    )
    assert caught.returncode == 3 and caught.stdout.startswith("EQUIVOCATION: "), caught.stdout
    assert honest["checkpoint"] in caught.stdout and other.text in caught.stdout
    agreed = fairroll_cli(
        "verify", "--equivocation", tmp_path / "a.json", tmp_path / "same.json", *common
    )
    assert agreed.returncode == 0 and agreed.stdout.startswith("consistent"), agreed.stdout


def test_an_append_after_a_larger_signed_checkpoint_stops_the_table(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    """Every round records its checkpoint as the table's last signed: if Redis holds a
    larger one (the head went back after it was signed), the append refuses and the
    table stops, so no second tree of a signed size is ever signed."""
    assert client.post("/v1/tft/contests", json={**BODY, "table": table}).status_code == 200
    redis_client.set(f"fairroll:{{{table}}}:signed", f"5 {'00' * 32}")
    refused = client.post("/v1/tft/contests", json={**BODY, "table": table})
    assert refused.status_code == 503 and "stopped" in refused.json()["detail"], refused.text
    assert redis_client.xlen(log_key(table)) == 1  # nothing was appended


def cosigner(name: str) -> tuple[Ed25519PrivateKey, str]:
    key = Ed25519PrivateKey.generate()
    return key, verifier_key(name, raw_public_key(key))


def test_players_cosign_checkpoints_and_go_checks_the_cosignatures(
    go_checker: Path, client: httpx.Client, table: str
) -> None:
    """Two players cosign the checkpoint they verified (C2SP tlog-cosignature): the server
    keeps and serves them, and the note it serves for that tree carries both lines;
    Go's note package still opens it for the log key, and Go's ed25519 checks each
    cosignature's bytes as the spec defines them."""
    roll(client, table, 3)
    note = client.get(f"/v1/tables/{table}/checkpoint").json()["text"]
    players = [cosigner("roth.players.example"), cosigner("sheena.players.example")]
    now = int(time.time())
    for key, vkey in players:
        line = cosign(note, vkey.split("+")[0], key, now)
        posted = client.post(
            f"/v1/tables/{table}/cosignatures", json={"vkey": vkey, "note": note + line + "\n"}
        )
        assert posted.status_code == 201, posted.text
        assert (posted.json()["size"], posted.json()["time"]) == (3, now)
    listed = client.get(f"/v1/tables/{table}/cosignatures").json()["cosignatures"]
    assert sorted(c["name"] for c in listed) == ["roth.players.example", "sheena.players.example"]
    assert {c["credential"] for c in listed} == {"none"}  # an open table's, posted with none
    served = client.get(f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"}).text
    assert served.startswith(note) and served.count("\n\u2014 ") == 3
    keys = client.get("/v1/keys").json()["keys"]
    signer = client.get(f"/v1/tables/{table}/checkpoint").json()["key_id"]
    vkey = next(k["note_key"] for k in keys if k["key_id"] == signer)
    seen = go_check(
        go_checker,
        {"vkey": vkey, "checkpoints": [served, note], "cosigners": [v for _, v in players]},
    )
    assert seen["checkpoints"] == ["", ""]
    assert seen["cosignatures"][0] == ["", ""]
    assert all("no cosignature" in said for said in seen["cosignatures"][1])


def test_a_forged_replayed_or_split_view_cosignature_is_refused(
    client: httpx.Client, table: str
) -> None:
    """A cosignature whose bytes were changed, one replayed onto another table's note, one
    dated in the future, and one of a note the operator signed for another tree of the
    same size (a split view a player was shown): none is kept; the last is a 409 whose
    note the player keeps as evidence."""
    roll(client, table, 2)
    note = client.get(f"/v1/tables/{table}/checkpoint").json()["text"]
    key, vkey = cosigner("roth.players.example")
    name = vkey.split("+")[0]
    url = f"/v1/tables/{table}/cosignatures"

    def post(text: str) -> httpx.Response:
        return client.post(url, json={"vkey": vkey, "note": text})

    good = cosign(note, name, key, int(time.time()))
    raw = bytearray(base64.b64decode(good.split(" ")[2]))
    raw[-1] ^= 1
    forged = f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}"
    assert post(note + forged + "\n").status_code == 422
    other = f"t-other-{table}"
    roll(client, other, 1)
    elsewhere = client.get(f"/v1/tables/{other}/checkpoint").json()["text"]
    replayed = post(elsewhere + cosign(elsewhere, name, key, int(time.time())) + "\n")
    assert replayed.status_code == 422 and "not of log" in replayed.text
    later = post(note + cosign(note, name, key, int(time.time()) + 3600) + "\n")
    assert later.status_code == 422 and "future" in later.text
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    split = sign_checkpoint(operator, table, 2, b"\x09" * 32, "ab" * 32).text
    conflict = post(split + cosign(split, name, key, int(time.time())) + "\n")
    assert conflict.status_code == 409 and "equivocation" in conflict.text, conflict.text
    assert client.get(url).json()["cosignatures"] == []
    assert post(note + good + "\n").status_code == 201


def test_the_page_verifier_and_the_library_agree_on_cosignatures(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """verify.js cosigns with WebCrypto's Ed25519 as the page does; the library checks its
    cosignature, and verify.js checks the library's (and refuses one with changed bytes)."""
    roll(client, table, 1)
    note = client.get(f"/v1/tables/{table}/checkpoint").json()["text"]
    (tmp_path / "note.txt").write_text(note)
    key, vkey = cosigner("python.players.example")
    line = cosign(note, "python.players.example", key, 1_700_000_000)
    said = run_node(
        ROOT / "tests" / "js" / "cosign.mjs",
        ROOT / "service" / "fairroll" / "page" / "static" / "verify.js",
        tmp_path / "note.txt",
        "page.players.example",
        "1700000001",
        vkey,
        line,
    )
    assert said["python"] == 1_700_000_000
    assert "does not verify" in said["forged"] or "no cosignature" in said["forged"]
    assert open_cosignature(note + said["line"] + "\n", said["vkey"]) == 1_700_000_001
    posted = client.post(
        f"/v1/tables/{table}/cosignatures",
        json={"vkey": said["vkey"], "note": note + said["line"] + "\n"},
    )
    assert posted.status_code == 201, posted.text


def witness_body(old: int, proof: list[str], note: str) -> str:
    return f"old {old}\n" + "".join(f"{h}\n" for h in proof) + "\n" + note


def test_a_witness_cosigns_only_a_log_that_grows_consistently(
    go_checker: Path, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """``fairroll witness`` (C2SP tlog-witness, over HTTP): it cosigns the first
    checkpoint and one consistent with it, and refuses a rollback, a stale old size, a
    second tree of the size it holds, an inconsistent tree, a forged signature and an
    unknown log, as the spec says; Go checks its cosignature's bytes."""
    keys = client.get("/v1/keys").json()["keys"]
    signer = client.get(f"/v1/tables/{table}/checkpoint").json()["key_id"]
    log_vkey = next(k["note_key"] for k in keys if k["key_id"] == signer)
    origin = f"fairroll/{table}"
    process, vkey, url, key = start_witness(tmp_path, f"{origin}={log_vkey}")
    try:
        assert vkey == verifier_key("witness.example/w1", raw_public_key(key))

        def add(body: str) -> httpx.Response:
            return httpx.post(url, content=body.encode(), timeout=10)

        roll(client, table, 3)
        three = client.get(f"/v1/tables/{table}/checkpoint").json()["text"]
        first = add(witness_body(0, [], three))
        assert first.status_code == 200, first.text
        assert open_cosignature(three + first.text, vkey) > 0
        roll(client, table, 2)
        five = client.get(f"/v1/tables/{table}/checkpoint").json()["text"]
        proof = client.get(
            f"/v1/tables/{table}/proofs/consistency", params={"from": 3, "to": 5}
        ).json()["proof"]
        grown = add(witness_body(3, proof, five))
        assert grown.status_code == 200, grown.text
        seen = go_check(
            go_checker, {"vkey": log_vkey, "checkpoints": [five + grown.text], "cosigners": [vkey]}
        )
        assert seen["checkpoints"] == [""] and seen["cosignatures"] == [[""]]
        operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
        other_five = sign_checkpoint(operator, table, 5, b"\x05" * 32, "ab" * 32).text
        other_six = sign_checkpoint(operator, table, 6, b"\x06" * 32, "ab" * 32).text
        stranger = sign_checkpoint(Signer.generate(), table, 7, b"\x07" * 32, "ab" * 32).text
        unknown = sign_checkpoint(operator, "elsewhere", 1, b"\x01" * 32, "ab" * 32).text
        rollback = add(witness_body(5, [], three))
        assert rollback.status_code == 400
        stale = add(witness_body(3, proof, five))
        assert stale.status_code == 409 and stale.text == "5\n"
        assert stale.headers["content-type"].startswith("text/x.tlog.size")
        assert add(witness_body(5, [], other_five)).status_code == 422
        assert add(witness_body(5, proof, other_six)).status_code == 422
        assert add(witness_body(5, [], stranger)).status_code == 403
        assert add(witness_body(0, [], unknown)).status_code == 404
        state = json.loads((tmp_path / "state.json").read_text())
        assert state[origin][0] == 5  # what it holds: the consistent tree, never rolled back
    finally:
        process.terminate()
        process.wait(15)


def start_witness(
    tmp_path: Path, *logs: str
) -> tuple[subprocess.Popen[str], str, str, Ed25519PrivateKey]:
    """``fairroll witness`` on a free port: its process, verifier key, add-checkpoint URL."""
    key = Ed25519PrivateKey.generate()
    (tmp_path / "witness.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "fairroll.cli",
        "witness",
        "--name",
        "witness.example/w1",
        "--key-file",
        str(tmp_path / "witness.pem"),
        "--state",
        str(tmp_path / "state.json"),
        "--port",
        str(port),
    ]
    for log in logs:
        command += ["--log", log]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    said = process.stderr.readline() if process.stderr else ""
    url = f"http://127.0.0.1:{port}/add-checkpoint"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.post(url, content=b"x", timeout=1)
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError("the witness did not start") from None
            time.sleep(0.1)
    return process, said.removeprefix("witness vkey: ").strip(), url, key


def test_the_service_submits_its_checkpoints_to_witnesses_and_serves_their_cosignatures(
    redis_server: RedisServer, tmp_path: Path, table: str
) -> None:
    """With FAIRROLL_WITNESSES, the server submits each active table's checkpoint to the
    witness off the roll path; the cosignature is kept, rides on the note, and a
    verifier requiring one witness of one accepts the note and one requiring two does not."""
    log_vkey = note_key(
        "fairroll",
        load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).public_key.public_key,
    )
    process, vkey, url, _ = start_witness(tmp_path, f"fairroll/*={log_vkey}")
    server = LiveServer(
        redis_server.url,
        tmp_path / "server.log",
        env={
            "FAIRROLL_WITNESSES": f"{url.removesuffix('/add-checkpoint')} {vkey}",
            "FAIRROLL_WITNESS_SECONDS": "0.2",
        },
    )
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            roll(client, table, 2)
            deadline = time.monotonic() + 20
            while not client.get(f"/v1/tables/{table}/cosignatures").json()["cosignatures"]:
                assert time.monotonic() < deadline, "no witness cosignature arrived"
                time.sleep(0.2)
            kept = client.get(f"/v1/tables/{table}/cosignatures").json()["cosignatures"]
            assert [c["credential"] for c in kept] == ["witness"], kept
            note = client.get(
                f"/v1/tables/{table}/checkpoint", headers={"Accept": "text/plain"}
            ).text
            assert "\n\u2014 witness.example/w1 " in note
            (tmp_path / "note.txt").write_text(note)
            (tmp_path / "keys.json").write_text(json.dumps(client.get("/v1/keys").json()))
            root = client.get("/v1/keys").json()["root"]
        common = ("--keys", tmp_path / "keys.json", "--root", root, "--witness", vkey)
        one = fairroll_cli("verify", "--cosigned", tmp_path / "note.txt", *common)
        assert one.returncode == 0 and "cosigned by 1 of 1 witnesses" in one.stdout, one.stdout
        stranger = verifier_key("other.example/w2", raw_public_key(Ed25519PrivateKey.generate()))
        two = fairroll_cli(
            "verify",
            "--cosigned",
            tmp_path / "note.txt",
            *common,
            "--witness",
            stranger,
            "--quorum",
            "2",
        )
        assert two.returncode == 1 and "2 are required" in two.stdout, two.stdout
    finally:
        server.stop()
        process.terminate()
        process.wait(15)


def test_go_checks_the_receipt_and_cosignature_vectors(go_checker: Path) -> None:
    """docs/vectors' receipts (each round's note, each entry's inclusion proof) and its
    cosigned note, by Go's sumdb code; the tampered ones fail there too."""
    vectors = ROOT / "docs" / "vectors"
    keys = json.loads((vectors / "keys.json").read_text())
    receipts = json.loads((vectors / "receipts.json").read_text())
    cosigned = json.loads((vectors / "cosignatures.json").read_text())
    log = (vectors / "log.ndjson").read_bytes().splitlines()

    def inclusion(receipt: dict[str, Any], seq: int) -> dict[str, Any]:
        return {
            "size": receipt["tree_size"],
            "index": seq - 1,
            "record": base64.b64encode(log[seq - 1]).decode(),
            "proof": receipt["proof"],
        }

    notes = sorted({r["checkpoint"] for r in receipts["receipts"]})
    request = {
        "vkey": keys["keys"][0]["note_key"],
        "checkpoints": [*notes, cosigned["cosigned"]],
        "inclusion": [inclusion(r, r["seq"]) for r in receipts["receipts"]],
        "cosigners": [cosigned["vkey"]],
    }
    seen = go_check(go_checker, request)
    assert seen["checkpoints"] == ["", "", ""] and seen["inclusion"] == [""] * 12
    assert seen["cosignatures"][2] == [""]
    # The receipts' forgeries whose proof Go reads: an altered and a cut proof.
    forged = [b for b in receipts["bad"] if b["name"] in ("proof-altered", "proof-cut")]
    bad = go_check(
        go_checker,
        {
            "vkey": request["vkey"],
            "checkpoints": notes,
            "inclusion": [inclusion(b["receipt"], b["entry_seq"]) for b in forged],
        },
    )
    assert all(bad["inclusion"]), bad
    # The forged cosignatures: none verifies in Go either.
    forgeries = list(cosigned["bad"].values())
    checked = go_check(
        go_checker,
        {"vkey": request["vkey"], "checkpoints": forgeries, "cosigners": [cosigned["vkey"]]},
    )
    assert all(said[0] for said in checked["cosignatures"]), checked


def test_go_checks_the_witness_vector(go_checker: Path) -> None:
    """docs/vectors/witness.json: each cosignature a witness answered opens for its key
    in Go, on the note it was asked to cosign; each consistency proof it took holds in
    Go's tlog, and the bad one it refused does not."""
    witnessed = json.loads((ROOT / "docs" / "vectors" / "witness.json").read_text())
    vkey = witnessed["log"].partition("=")[2]
    sizes: dict[int, str] = {}  # the trees the witness cosigned, by size
    cosigned, consistency = [], []
    for step in witnessed["steps"]:
        head, _, note = step["request"].partition("\n\n")
        lines = head.split("\n")
        old = int(lines[0].removeprefix("old "))
        size = int(note.split("\n")[1])
        if step["status"] == 200:
            cosigned.append(note + step["body"])
            sizes.setdefault(size, note)
        if old and old < size and step["status"] in (200, 422):
            consistency.append(({"from": old, "to": size, "proof": lines[1:]}, step["status"]))
    seen = go_check(
        go_checker,
        {
            "vkey": vkey,
            "checkpoints": [*sizes.values()],
            "consistency": [c for c, _ in consistency],
        },
    )
    assert seen["checkpoints"] == [""] * len(sizes)
    assert [said == "" for said in seen["consistency"]] == [s == 200 for _, s in consistency]
    checked = go_check(
        go_checker, {"vkey": vkey, "checkpoints": cosigned, "cosigners": [witnessed["vkey"]]}
    )
    assert checked["checkpoints"] == [""] * len(cosigned)
    assert all(said == [""] for said in checked["cosignatures"]), checked
