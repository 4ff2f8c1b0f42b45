"""Hash-chain seed sessions (issue 28, item 1): the server commits its chain's anchor
before any roll; the roll with nonce i reveals link i, which hashes to link i - 1, so it
verifies the moment it is answered; nonces run 1, 2, 3 ... across renewed chains; and an
operator with the signing key can neither grind a chain roll's dice nor move a roll to
another player's session, as every verifier (the library, ``POST /v1/verify``, the
stdlib script and ``verify.js``) shows. Real redis-server, real HTTP."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from fairroll.audit import Trust, verify_entries
from fairroll.audit.verify import SELECTIVE_REFUSAL, WHAT_IT_PROVES
from fairroll.chain import MAX_LENGTH, HashChain, previous, steps_to
from fairroll.mechanics import replay_entry
from fairroll.randomness import committed_seed, derive_faces
from test_attacks import Log, rechain, verdicts

ROOT = Path(__file__).resolve().parents[1]
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


@given(
    last=st.binary(min_size=32, max_size=32),
    length=st.integers(1, 200),
    data=st.data(),
)
def test_every_link_hashes_to_the_one_before_and_the_anchor(
    last: bytes, length: int, data: st.DataObject
) -> None:
    chain = HashChain(last.hex(), length)
    j = data.draw(st.integers(1, length))
    assert chain.link(length) == last.hex()
    assert previous(chain.link(j)) == chain.link(j - 1)
    assert steps_to(chain.link(j), j) == chain.anchor == chain.link(0)
    assert chain.link(j) == steps_to(last.hex(), length - j)


def test_the_published_chain_vectors() -> None:
    """docs/randomness.md's chain: the library makes the links it lists from the last."""
    text = (ROOT / "docs" / "randomness.md").read_text()
    rows = re.findall(r"^\| link (\d) \| `([0-9a-f]{64})` \| `([0-9a-f]{64})` \|$", text, re.M)
    assert len(rows) == 3
    chain = HashChain(rows[-1][1], 3)
    for j, link, before in rows:
        assert (chain.link(int(j)), chain.link(int(j) - 1)) == (link, before)
    rolls = re.findall(
        r"^\| chain \| `([0-9a-f]{64})` \| `([^`]+)` \| (\d+) \| 6 \| 6 \| ([\d ]+) \|$", text, re.M
    )
    assert len(rolls) == 3
    for link, client_seed, nonce, faces in rolls:
        seed = committed_seed(link, client_seed, int(nonce))
        assert list(derive_faces(seed, sides=6, count=6)) == [int(f) for f in faces.split()]


def test_a_chain_refuses_lengths_and_links_it_has_not() -> None:
    for length in (0, MAX_LENGTH + 1):
        try:
            HashChain("00" * 32, length)
        except ValueError:
            continue
        raise AssertionError(length)
    chain = HashChain("00" * 32, 3)
    for j in (-1, 4):
        try:
            chain.link(j)
        except ValueError:
            continue
        raise AssertionError(j)


def start(client: httpx.Client, table: str, **body: Any) -> dict[str, Any]:
    made = client.post(f"/v1/tables/{table}/seeds", json=body or None)
    assert made.status_code == 201, made.text
    return made.json()


def roll(
    client: httpx.Client, table: str, seed_id: str, client_seed: str, **extra: Any
) -> httpx.Response:
    ref = {"seed_id": seed_id, "client_seed": client_seed, **extra.pop("ref", {})}
    return client.post("/v1/tft/contests", json={**BODY, "table": table, "session": ref}, **extra)


def export(client: httpx.Client, table: str) -> Log:
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    return [json.loads(line) for line in lines]


def test_each_roll_reveals_its_link_and_verifies_at_once(client: httpx.Client, table: str) -> None:
    session = start(client, table, player="Roth")
    assert (session["kind"], session["length"], session["first_nonce"]) == ("chain", 1000, 1)
    assert session["player"] == "Roth" and session["server_seed"] is None
    before = session["commitment"]  # the anchor, in the log before any roll
    for nonce in (1, 2, 3):
        answer = roll(client, table, session["seed_id"], "roth-device-seed").json()
        ref = answer["session"]
        assert (ref["nonce"], ref["first_nonce"], ref["commitment"]) == (
            nonce,
            1,
            session["commitment"],
        )
        assert previous(ref["link"]) == before  # link i hashes to link i - 1
        before = ref["link"]
        seed = committed_seed(ref["link"], "roth-device-seed", nonce)
        faces = [d["face"] for d in answer["dice"]]
        assert faces == list(derive_faces(seed, sides=6, count=len(faces)))
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert report["ok"] and report["unrevealed"] == 0, report
    assert report["sources"] == {"committed": 3}
    assert report["proves"] == {"committed": WHAT_IT_PROVES["committed"]}
    assert report["refusals"] == SELECTIVE_REFUSAL
    commit = export(client, table)[0]
    assert commit["mechanic"] == "session.commit" and commit["request"]["kind"] == "chain"
    assert commit["request"]["player"] == "Roth"


def test_a_used_up_chain_renews_itself_and_the_nonces_run_on(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    session = start(client, table, length=2)
    nonces = [
        roll(client, table, session["seed_id"], f"p{i}").json()["session"]["nonce"]
        for i in range(5)
    ]
    assert nonces == [1, 2, 3, 4, 5]
    log = export(client, table)
    renewals = [e for e in log if e["mechanic"] == "session.renew"]
    assert [r["request"]["first_nonce"] for r in renewals] == [3, 5]
    assert renewals[0]["request"]["previous"] == session["commitment"]
    status = client.get(f"/v1/tables/{table}/seeds/{session['seed_id']}").json()
    assert (status["rolls"], status["first_nonce"], status["length"]) == (5, 5, 2)
    found = verdicts(client, tmp_path, log, None)
    assert {name: seq for name, (seq, _) in found.items()} == dict.fromkeys(found), found
    # Closed, the session publishes its current chain's last link: the whole chain opens.
    revealed = client.post(f"/v1/tables/{table}/seeds/{session['seed_id']}/reveal").json()
    assert steps_to(revealed["server_seed"], 2) == revealed["commitment"]
    assert roll(client, table, session["seed_id"], "late").status_code == 409
    log = export(client, table)
    found = verdicts(client, tmp_path, log, None)
    assert {name: seq for name, (seq, _) in found.items()} == dict.fromkeys(found), found


def test_the_nonce_is_stated_refusals_take_none_and_a_retry_gets_the_same_roll(
    client: httpx.Client, table: str
) -> None:
    session = start(client, table)
    seed_id = session["seed_id"]
    wrong = roll(client, table, seed_id, "s", ref={"nonce": 2})
    assert wrong.status_code == 409 and wrong.json()["nonce"] == 1
    refused = client.post(  # the rules refuse it: no nonce is taken
        "/v1/tft/contests",
        json={
            "a": {},
            "b": {"attribute": 12},
            "table": table,
            "session": {"seed_id": seed_id, "client_seed": "s"},
        },
    )
    assert refused.status_code == 422
    key = {"Idempotency-Key": "retry-of-nonce-1"}
    first = roll(client, table, seed_id, "s", ref={"nonce": 1}, headers=key)
    again = roll(client, table, seed_id, "s", ref={"nonce": 1}, headers=key)
    assert first.status_code == again.status_code == 200
    assert first.json()["receipt"] == again.json()["receipt"]
    assert first.json()["dice"] == again.json()["dice"]
    assert first.json()["session"]["nonce"] == 1


def chain_campaign(client: httpx.Client, table: str) -> tuple[Log, dict[str, Any], dict[str, Any]]:
    """Two players, each in a hash-chain session of their own, two rolls each."""
    roth = start(client, table, player="Roth")
    sheena = start(client, table, player="Sheena")
    for _ in range(2):
        assert roll(client, table, roth["seed_id"], "roth").is_success
        assert roll(client, table, sheena["seed_id"], "sheena").is_success
    return export(client, table), roth, sheena  # seqs 1..6


def test_a_chain_seed_cannot_be_ground_by_the_operator(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """The operator holds the signing key, drew the chain, and sees the player's client
    seed: it rewrites Roth's second roll from another seed of its liking and re-signs the
    log. The link it would need hashes to the one Roth's first roll revealed: SHA-256
    would have to be run backwards, so every verifier names the forged roll."""
    log, roth, _ = chain_campaign(client, table)
    forged = copy.deepcopy(log)
    target = next(
        e
        for e in forged
        if (e.get("session") or {}).get("nonce") == 2 and e["session"]["seed_id"] == roth["seed_id"]
    )
    ground = "ab" * 32
    seed = committed_seed(ground, "roth", 2)
    target["session"]["link"] = ground
    for position, die in enumerate(target["dice"]):
        die["face"] = derive_faces(seed, sides=die["sides"], count=1, start=position)[0]
    dice, outcome = replay_entry(target, seed)
    target["dice"], target["outcome"] = dice, outcome
    found = verdicts(client, tmp_path, rechain(forged), None)
    assert {name: seq for name, (seq, _) in found.items()} == dict.fromkeys(found, target["seq"])
    for name in ("library", "verify.js"):
        assert "does not hash" in found[name][1], found


def test_one_players_outcome_cannot_be_handed_to_another(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """The operator moves Sheena's lucky first roll into Roth's session (its seed id,
    anchor and nonce), re-chained and re-signed: Roth's chain has no such link."""
    log, roth, sheena = chain_campaign(client, table)
    forged = copy.deepcopy(log)
    lucky = next(e for e in forged if (e.get("session") or {}).get("seed_id") == sheena["seed_id"])
    lucky["session"]["seed_id"] = roth["seed_id"]
    lucky["session"]["commitment"] = roth["commitment"]
    # Roth's own first roll is dropped to make room: the nonces still run 1, 2.
    forged = [
        e
        for e in forged
        if not (
            (e.get("session") or {}).get("seed_id") == roth["seed_id"]
            and e["session"]["nonce"] == 1
            and e is not lucky
        )
    ]
    for seq, entry in enumerate(forged, 1):
        entry["seq"] = seq
    found = verdicts(client, tmp_path, rechain(forged), None)
    assert {name: seq for name, (seq, _) in found.items()} == dict.fromkeys(found, lucky["seq"])


def test_one_chain_roll_checks_alone_with_the_stdlib_script(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    session = start(client, table)
    roll(client, table, session["seed_id"], "alone")
    entry = export(client, table)[1]
    path = tmp_path / "entry.json"
    path.write_text(json.dumps(entry))
    ran = subprocess.run(
        [sys.executable, ROOT / "scripts" / "verify_roll.py", path],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout
    assert WHAT_IT_PROVES["committed"] in ran.stdout
    entry["session"]["link"] = "cd" * 32
    path.write_text(json.dumps(entry))
    ran = subprocess.run(
        [sys.executable, ROOT / "scripts" / "verify_roll.py", path],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 1 and "does not hash to its chain's anchor" in ran.stdout


def test_a_range_of_a_chain_session_verifies_from_its_first_roll(
    client: httpx.Client, table: str
) -> None:
    session = start(client, table, length=2)
    for i in range(4):
        assert roll(client, table, session["seed_id"], f"r{i}").is_success
    log = export(client, table)
    lines = [json.dumps(e) for e in log]
    # From the second roll on (seq 3): the session was committed before the range.
    report = verify_entries(lines[2:], Trust(keys=None), replay=replay_entry)
    assert report.ok, report
    forged = copy.deepcopy(log)
    forged[2]["session"]["link"] = "ef" * 32
    bad = verify_entries(
        [json.dumps(e) for e in rechain(forged)][2:], Trust(keys=None), replay=replay_entry
    )
    assert bad.first_bad_seq == 3 and "anchor" in (bad.reason or ""), bad


def test_every_verifier_says_the_same_words() -> None:
    """The library (fairroll verify, the endpoints), the stdlib script and verify.js (the
    page, the npm client) say in the same words what each source proves."""
    spec = importlib.util.spec_from_file_location("verify_roll", ROOT / "scripts/verify_roll.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.WHAT_IT_PROVES == WHAT_IT_PROVES
    assert script.SELECTIVE_REFUSAL == SELECTIVE_REFUSAL
    page = (ROOT / "service/fairroll/page/static/verify.js").as_uri()
    program = (
        f"import {{ PROVES, SELECTIVE_REFUSAL }} from {json.dumps(page)};"
        "console.log(JSON.stringify({ PROVES, SELECTIVE_REFUSAL }));"
    )
    said = subprocess.run(
        ["node", "--input-type=module", "-e", program],
        capture_output=True,
        text=True,
        check=True,
    )
    words = json.loads(said.stdout)
    assert words == {"PROVES": WHAT_IT_PROVES, "SELECTIVE_REFUSAL": SELECTIVE_REFUSAL}
