"""The attacks on fairroll's promise, each tried the way a cheater or an operator would,
and each detected by every verifier at the right seq (or refused by the server).

Verifiers: ``verify_entries`` (what ``fairroll verify`` and the server run), ``POST
/v1/verify``, the stdlib-only ``scripts/verify_roll.py --export`` and the in-page
``verify.js``. The operator holds the signing key (``TEST_SIGNING_KEY``), so its
forgeries are re-chained and re-signed: only the log's own rules catch them. Attacks the
server refuses outright (a refused roll burning a nonce, the head moved back, a
checkpoint inconsistent with the last one) are in ``test_seed_sessions``,
``test_transparency`` and ``test_table_page``; a chosen seed ground offline is not
detectable, and is labelled instead (below)."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from fairroll.audit import Draft, Head, Signer, Trust, load_signer, verify_entries
from fairroll.audit.entry import GENESIS_HASH, chain_hash
from fairroll.audit.signing import certify, seal
from fairroll.mechanics import replay_entry
from support import TEST_SIGNING_KEY, run_node

ROOT = Path(__file__).resolve().parents[1]
OPERATOR = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
PINNED = OPERATOR.key_id
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
Log = list[dict[str, Any]]


def rechain(entries: Log, signer: Signer = OPERATOR, start: int = 0) -> Log:
    """Re-chain and re-sign from ``start``: what an operator with the key can do."""
    out = copy.deepcopy(entries)
    for index in range(start, len(out)):
        entry = out[index]
        entry["prev_hash"] = out[index - 1]["entry_hash"] if index else GENESIS_HASH
        entry["key_id"] = signer.key_id if index >= start else entry["key_id"]
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = signer.sign(entry["entry_hash"])
    return out


def renumber(entries: Log) -> Log:
    for seq, entry in enumerate(entries, 1):
        entry["seq"] = seq
    return entries


@pytest.fixture
def campaign(client: httpx.Client, table: str) -> Log:
    """A table's real log: drawn rolls, a chosen-seed roll, a seed session with three
    committed rolls and its reveal."""
    post = client.post
    assert post("/v1/tft/contests", json={**BODY, "table": table}).is_success
    assert post("/v1/tft/contests", json={**BODY, "table": table, "seed": "ground"}).is_success
    seed_id = post(f"/v1/tables/{table}/seeds", json={"kind": "commit"}).json()["seed_id"]
    for player in ("p1", "p2", "p3"):
        ref = {"seed_id": seed_id, "client_seed": player}
        assert post("/v1/tft/contests", json={**BODY, "table": table, "session": ref}).is_success
    assert post(f"/v1/tables/{table}/seeds/{seed_id}/reveal").is_success
    assert post("/v1/tft/contests", json={**BODY, "table": table}).is_success
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    return [json.loads(line) for line in lines]  # seqs 1..8


def lines_of(entries: Log | list[str]) -> list[str]:
    return [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in entries]


def verdicts(
    client: httpx.Client, tmp_path: Path, log: Log | list[str], kept: tuple[int, str] | None
) -> dict[str, tuple[int | None, str]]:
    """(first bad seq, reason) by verifier; a kept checkpoint's (size, root) if given."""
    text = "".join(line + "\n" for line in lines_of(log))
    found: dict[str, tuple[int | None, str]] = {}
    roots = [(kept[0], base64.b64decode(kept[1]))] if kept else []
    report = verify_entries(
        text.splitlines(), Trust(keys=None, root=PINNED, roots=roots), replay=replay_entry
    )
    found["library"] = (report.first_bad_seq, report.reason or "")
    params: dict[str, Any] = {"root": PINNED}
    if kept:
        entry = next((e for e in log if isinstance(e, dict) and e["seq"] == kept[0]), None)
        if entry is not None:
            params["anchor"] = f"{kept[0]}:{entry['entry_hash']}"
        else:
            params["anchor"] = f"{kept[0]}:{'0' * 64}"
    upload = client.post(
        "/v1/verify",
        params=params,
        content=text.encode(),
        headers={"Content-Type": "application/x-ndjson"},
    ).json()
    found["endpoint"] = (upload["first_bad_seq"], upload.get("reason") or "")
    export = tmp_path / "export.ndjson"
    export.write_text(text)
    if kept is None:  # a kept checkpoint is a signature check: the stdlib has no Ed25519
        script = subprocess.run(
            [
                sys.executable,
                ROOT / "scripts" / "verify_roll.py",
                "--export",
                export,
                "--root",
                PINNED,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        first = script.stdout.splitlines()[0]
        seq = (
            int(first.split("FAIL at seq ")[1].split(":")[0]) if first.startswith("FAIL") else None
        )
        found["stdlib"] = (seq, first)
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(client.get("/v1/keys").json()))
    args = [
        ROOT / "tests" / "js" / "verify_log.mjs",
        ROOT / "service/fairroll/page/static/verify.js",
    ]
    page = run_node(*args, keys, export, PINNED, *(map(str, kept) if kept else ()))
    found["verify.js"] = (page["seq"], page.get("reason", ""))
    return found


def skip_a_nonce(log: Log) -> Log:
    """The operator drops the committed roll at nonce 2 (the outcome it did not like),
    re-chains and re-signs the rest, and fixes the reveal's count."""
    kept = [e for e in copy.deepcopy(log) if (e.get("session") or {}).get("nonce") != 2]
    for entry in kept:
        if entry["mechanic"] == "session.reveal":
            entry["request"]["rolls"] = 2
    return rechain(renumber(kept))


def added_key(log: Log) -> Log:
    """A key added in Redis by hand: the log rewritten and signed by it, self-certified."""
    intruder = Signer.generate()
    forged = copy.deepcopy(log)
    forged[0]["certificate"] = msgspec.to_builtins(intruder.certificate)
    return rechain(forged, intruder)


def back_dated_retired_key(log: Log) -> Log:
    """Rotation: the root certifies a new key, which retires the root in the log; then the
    root key signs another entry, dated before the retirement."""
    new = Signer.generate()
    new = Signer(new._private, certify(OPERATOR, new.public_key.public_key))
    forged = copy.deepcopy(log)
    last = forged[-1]

    def statement(mechanic: str, request: dict[str, Any]) -> Draft:
        return Draft.statement(last["table"], mechanic, request)

    retire = seal(
        statement("key.retire", {"key_id": OPERATOR.key_id}),
        Head(last["seq"], last["entry_hash"]),
        new,
        "2026-12-01T12:00:00.000Z",
        publish=True,
    )
    late = seal(
        statement(
            "audit.epoch", {"lost_after": retire.seq, "resume_after": retire.seq, "reason": "x"}
        ),
        Head(retire.seq, retire.entry_hash),
        OPERATOR,
        "2020-01-01T00:00:00.000Z",
    )
    return [*forged, json.loads(msgspec.json.encode(retire)), json.loads(msgspec.json.encode(late))]


def across_tables(log: Log) -> Log:
    """A roll from another table replayed into this one, re-chained and re-signed."""
    forged = copy.deepcopy(log)
    forged[2]["table"] = "another-table"
    return rechain(forged, OPERATOR, 2)


def spliced(log: Log) -> Log:
    """An entry of another log spliced in as it was (signature intact, not re-chained)."""
    forged = copy.deepcopy(log)
    other = copy.deepcopy(log[5])
    other["prev_hash"] = "ab" * 32
    other["seq"] = 6
    body = {k: v for k, v in other.items() if k not in ("entry_hash", "signature")}
    other["entry_hash"] = chain_hash(other["prev_hash"], body)
    other["signature"] = OPERATOR.sign(other["entry_hash"])
    forged[5] = other
    return forged


def duplicate_key(log: Log) -> list[str]:
    lines = lines_of(log)
    lines[3] = lines[3][:-1] + ',"outcome":null}'
    return lines


ATTACKS: dict[str, tuple[Callable[[Log], Any], int, str]] = {
    "operator skips a nonce": (skip_a_nonce, 5, "nonce 2 of seed session"),
    "key added in Redis": (added_key, 1, "not certified by the pinned root"),
    "retired key, back-dated": (back_dated_retired_key, 10, "after its retirement at seq 9"),
    "replay across tables": (across_tables, 3, "table"),
    "splice": (spliced, 6, "prev_hash"),
    "duplicate JSON key": (duplicate_key, 4, "twice"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_each_attack_is_caught_by_each_verifier_at_its_seq(
    name: str, campaign: Log, client: httpx.Client, tmp_path: Path
) -> None:
    forge, seq, phrase = ATTACKS[name]
    found = verdicts(client, tmp_path, forge(campaign), None)
    assert {v: s for v, (s, _) in found.items()} == dict.fromkeys(found, seq), (name, found)
    for verifier in ("library", "verify.js"):
        assert phrase in found[verifier][1], (name, verifier, found[verifier])


def test_the_genuine_log_passes_and_a_chosen_seed_is_labelled_not_fair(
    campaign: Log, client: httpx.Client, tmp_path: Path
) -> None:
    """Grinding a caller-chosen seed offline cannot be detected: every verifier says so
    instead, and a table can refuse chosen seeds."""
    found = verdicts(client, tmp_path, campaign, None)
    assert {s for s, _ in found.values()} == {None}, found
    report = verify_entries(lines_of(campaign), Trust(keys=None, root=PINNED))
    assert report.sources == {"drawn": 2, "chosen": 1, "committed": 3}
    script = subprocess.run(
        [
            sys.executable,
            ROOT / "scripts" / "verify_roll.py",
            "--export",
            tmp_path / "export.ndjson",
            "--root",
            PINNED,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "reproducible, not fair" in script.stdout
    strict = client.post("/v1/tables", json={"policy": {"chosen_seeds": False}}).json()
    refused = client.post(
        "/v1/tft/contests",
        json={**BODY, "table": strict["table"], "seed": "ground"},
        headers={"Authorization": f"Bearer {strict['write_key']}"},
    )
    assert refused.status_code == 422
    assert refused.json()["invalid_params"][0]["name"] == "seed"


def test_truncation_and_a_fork_are_caught_against_a_kept_checkpoint(
    campaign: Log, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    kept = client.get(f"/v1/tables/{table}/checkpoint").json()
    assert kept["size"] == 8
    checkpoint = (kept["size"], kept["root_hash"])
    cut = verdicts(client, tmp_path, campaign[:6], checkpoint)
    assert {v: s for v, (s, _) in cut.items()} == dict.fromkeys(cut, 7), cut
    fork = copy.deepcopy(campaign)
    fork[7]["outcome"]["victor"] = "b" if fork[7]["outcome"]["victor"] != "b" else "a"
    forked = verdicts(client, tmp_path, rechain(fork, OPERATOR, 7), checkpoint)
    # The replay catches the outcome; a fork with a different roll is caught by the root.
    assert {v: s for v, (s, _) in forked.items()} == dict.fromkeys(forked, 8), forked
