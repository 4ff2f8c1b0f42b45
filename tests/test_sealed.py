"""Sealed rolls, attacked the way a cheater or an operator would (docs/audit.md, "Sealed
rolls"; rows 25-28 of the checks table), through a real server and a real Redis.

A sealed roll's entry commits to its opening (blind, mechanic, request, dice, outcome);
its reveal publishes the opening. The server refuses a reveal that does not open the
commitment (422, nothing appended), a second reveal (409), a reveal of another entry;
``fairroll verify`` catches the same reveal written into the log by hand (re-signed
with the test key, as an operator holding it could); a sealed roll never revealed is
listed by the report; and the dice of a sealed roll cannot be read from the public log.
"""

from __future__ import annotations

import copy
import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from fairroll.audit import Trust, load_signer, verify_entries
from fairroll.audit.entry import chain_hash
from fairroll.audit.sealed import opening_commitment
from fairroll.mechanics import replay_entry
from fairroll.randomness import SeededDice, committed_seed
from fairroll.rules.tft import Contest, resolve_contest
from support import TEST_ROOT, TEST_SIGNING_KEY

OPERATOR = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}
Log = list[dict[str, Any]]


def _session(client: httpx.Client, table: str) -> str:
    opened = client.post(f"/v1/tables/{table}/seeds")
    assert opened.status_code == 201, opened.text
    return str(opened.json()["seed_id"])


def _sealed(
    client: httpx.Client,
    table: str,
    seed_id: str,
    client_seed: str,
    audience: str = "gm",
    blind: str | None = None,
) -> httpx.Response:
    sealed = {"audience": audience, "blind": blind or secrets.token_hex(32)}
    ref = {"seed_id": seed_id, "client_seed": client_seed}
    return client.post(
        "/v1/tft/contests", json={**BODY, "table": table, "session": ref, "sealed": sealed}
    )


def _log(client: httpx.Client, table: str) -> Log:
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    return [json.loads(line) for line in lines]


def _verify(log: Log) -> Any:
    lines = [json.dumps(e, separators=(",", ":")) for e in log]
    return verify_entries(lines, Trust(keys=None, root=TEST_ROOT), replay=replay_entry)


def _resigned(log: Log, start: int) -> Log:
    """The operator's rewrite from index ``start``: re-chained and re-signed."""
    out = copy.deepcopy(log)
    for index in range(start, len(out)):
        entry = out[index]
        entry["prev_hash"] = out[index - 1]["entry_hash"]
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        entry["signature"] = OPERATOR.sign(entry["entry_hash"])
    return out


def _reveal(client: httpx.Client, table: str, seq: int, opening: Any) -> httpx.Response:
    return client.post(f"/v1/tables/{table}/sealed/{seq}/reveal", json={"opening": opening})


@pytest.fixture
def sealed_roll(client: httpx.Client, table: str) -> dict[str, Any]:
    """A hash-chain session and one sealed GM roll in it: the answer."""
    seed_id = _session(client, table)
    answer = _sealed(client, table, seed_id, "c-" + secrets.token_hex(8))
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_sealed_roll_answers_its_dice_and_logs_only_a_commitment(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    opening, seq = sealed_roll["opening"], sealed_roll["receipt"]["seq"]
    entry = client.get(f"/v1/tables/{table}/entries/{seq}").json()
    assert entry["mechanic"] == sealed_roll["mechanic"] == "sealed.roll"
    assert entry["dice"] == [] and entry["outcome"] is None and entry["seed"] is None
    assert entry["request"] == {
        "mechanic": "tft.contest",
        "audience": "gm",
        "commitment": opening_commitment(opening),
    }
    assert sealed_roll["dice"] == opening["dice"] and sealed_roll["outcome"] == opening["outcome"]
    assert opening["mechanic"] == "tft.contest"
    assert opening["request"] == entry_request_of(client, table, opening)
    report = _verify(_log(client, table))
    assert report.ok, report.reason
    assert report.sealed_unrevealed == [seq] and report.sealed_revealed == 0


def entry_request_of(client: httpx.Client, table: str, opening: Any) -> Any:
    """The request an ordinary TFT contest's entry holds for the same body."""
    plain = client.post("/v1/tft/contests", json={**BODY, "table": table}).json()
    return client.get(f"/v1/tables/{table}/entries/{plain['receipt']['seq']}").json()["request"]


def test_the_public_log_does_not_give_a_sealed_rolls_dice(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    # "the dice must not derive from public values alone: the blind keeps them
    # unguessable until the opening is published"
    seq = sealed_roll["receipt"]["seq"]
    entry = client.get(f"/v1/tables/{table}/entries/{seq}").json()
    assert entry["dice"] == []
    assert sealed_roll["opening"]["blind"] not in json.dumps(_log(client, table))
    session = entry["session"]
    public = SeededDice(committed_seed(session["link"], session["client_seed"], session["nonce"]))
    resolve_contest(msgspec.convert(BODY, Contest), public)
    answered = [d["face"] for d in sealed_roll["dice"]]
    assert [d.face for d in public.dice] != answered


def test_the_reveal_opens_the_roll_and_the_report_counts_it(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    revealed = _reveal(client, table, seq, sealed_roll["opening"])
    assert revealed.status_code == 200, revealed.text
    answer = revealed.json()
    assert answer["seq"] == seq and answer["receipt"]["seq"] == answer["reveal_seq"]
    statement = client.get(f"/v1/tables/{table}/entries/{answer['reveal_seq']}").json()
    assert statement["mechanic"] == "sealed.reveal" and statement["source"] == "statement"
    assert statement["request"] == {"seq": seq, "opening": sealed_roll["opening"]}
    report = _verify(_log(client, table))
    assert report.ok, report.reason
    assert report.sealed_unrevealed == [] and report.sealed_revealed == 1


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ("outcome", "opening"),
        ("dice", "opening"),
        ("blind", "opening"),
    ],
)
def test_a_reveal_that_does_not_match_is_refused_and_appends_nothing(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any], edit: str, field: str
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    forged = _edited(sealed_roll["opening"], edit)
    before = len(_log(client, table))
    refused = _reveal(client, table, seq, forged)
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["invalid_params"][0]["name"] == field
    assert "does not open the commitment" in problem["detail"]
    assert len(_log(client, table)) == before


@pytest.mark.parametrize("edit", ["outcome", "dice", "blind"])
def test_fairroll_verify_catches_a_reveal_written_by_hand(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any], edit: str, tmp_path: Path
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    assert _reveal(client, table, seq, sealed_roll["opening"]).status_code == 200
    log = _log(client, table)
    reveal = log[-1]
    reveal["request"]["opening"] = _edited(reveal["request"]["opening"], edit)
    forged = _resigned(log, len(log) - 1)
    export = tmp_path / "export.ndjson"
    export.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in forged))
    verified = subprocess.run(
        [sys.executable, "-m", "fairroll.cli", "verify", str(export), "--root", TEST_ROOT],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode != 0
    assert f"FAIL at seq {reveal['seq']}" in verified.stdout, verified.stdout
    assert f"does not open the commitment of seq {seq}" in verified.stdout


def test_a_forged_sealed_roll_committing_to_ground_dice_is_caught_at_its_reveal(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    # The operator rewrites the sealed entry's commitment to an opening with other dice
    # (and the outcome they give), and its reveal: the commitment opens, the dice do not
    # derive from link:client_seed:nonce:blind.
    seq = sealed_roll["receipt"]["seq"]
    assert _reveal(client, table, seq, sealed_roll["opening"]).status_code == 200
    log = _log(client, table)
    index = next(i for i, e in enumerate(log) if e["seq"] == seq)
    ground = SeededDice("ground by the operator")
    outcome = resolve_contest(msgspec.convert(BODY, Contest), ground)
    opening = json.loads(json.dumps(sealed_roll["opening"]))
    opening["dice"] = [{"group": d.group, "sides": d.sides, "face": d.face} for d in ground.dice]
    opening["outcome"] = msgspec.to_builtins(outcome)
    log[index]["request"]["commitment"] = opening_commitment(opening)
    log[-1]["request"]["opening"] = opening
    report = _verify(_resigned(log, index))
    assert report.first_bad_seq == log[-1]["seq"]
    assert "does not derive from" in (report.reason or "")


def test_a_second_reveal_is_refused_409(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    assert _reveal(client, table, seq, sealed_roll["opening"]).status_code == 200
    before = len(_log(client, table))
    again = _reveal(client, table, seq, sealed_roll["opening"])
    assert again.status_code == 409, again.text
    assert len(_log(client, table)) == before


def test_a_second_reveal_written_by_hand_is_caught(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    assert _reveal(client, table, seq, sealed_roll["opening"]).status_code == 200
    log = _log(client, table)
    twice = copy.deepcopy(log[-1])
    twice["seq"] = log[-1]["seq"] + 1
    report = _verify(_resigned([*log, twice], len(log)))
    assert report.first_bad_seq == twice["seq"]
    assert "is revealed twice" in (report.reason or "")


def test_a_reveal_for_another_roll_is_refused_and_caught(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    seed_id = sealed_roll["session"]["seed_id"]
    client_seed = sealed_roll["session"]["client_seed"]
    other = _sealed(client, table, seed_id, client_seed, audience="self").json()
    first, second = sealed_roll["receipt"]["seq"], other["receipt"]["seq"]
    # The first roll's opening offered as the second's: it does not open its commitment.
    refused = _reveal(client, table, second, sealed_roll["opening"])
    assert refused.status_code == 422, refused.text
    assert refused.json()["invalid_params"][0]["name"] == "opening"
    # A plain roll's seq: no sealed roll there.
    plain = client.post("/v1/tft/contests", json={**BODY, "table": table}).json()
    not_sealed = _reveal(client, table, plain["receipt"]["seq"], sealed_roll["opening"])
    assert not_sealed.status_code == 422
    assert not_sealed.json()["invalid_params"][0]["name"] == "seq"
    # Written by hand: a reveal naming the second roll with the first's opening.
    assert _reveal(client, table, first, sealed_roll["opening"]).status_code == 200
    log = _log(client, table)
    log[-1]["request"]["seq"] = second
    report = _verify(_resigned(log, len(log) - 1))
    assert report.first_bad_seq == log[-1]["seq"]
    assert f"does not open the commitment of seq {second}" in (report.reason or "")


def test_a_sealed_roll_never_revealed_is_listed_not_bad(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any], tmp_path: Path
) -> None:
    seed_id = sealed_roll["session"]["seed_id"]
    client_seed = sealed_roll["session"]["client_seed"]
    answers = [_sealed(client, table, seed_id, client_seed, a).json() for a in ("blind", "self")]
    seqs = [sealed_roll["receipt"]["seq"], *(a["receipt"]["seq"] for a in answers)]
    assert _reveal(client, table, seqs[1], None).status_code in (400, 422)
    report = _verify(_log(client, table))
    assert report.ok and report.sealed_unrevealed == seqs
    export = tmp_path / "export.ndjson"
    export.write_bytes(client.get(f"/v1/tables/{table}/export").content)
    verified = subprocess.run(
        [sys.executable, "-m", "fairroll.cli", "verify", str(export), "--root", TEST_ROOT],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    words = f"3 sealed rolls never revealed: seq {seqs[0]}, {seqs[1]}, {seqs[2]}"
    assert words in verified.stdout
    online = client.get(f"/v1/tables/{table}/verification").json()
    assert online["sealed_unrevealed"] == seqs


def test_sealed_without_a_chain_session_is_refused(client: httpx.Client, table: str) -> None:
    sealed = {"audience": "gm", "blind": secrets.token_hex(32)}
    for extra in ({}, {"seed": "chosen"}, {"dice": {"a": [1, 2, 3, 4, 5, 6, 6], "b": [1] * 4}}):
        refused = client.post(
            "/v1/tft/contests", json={**BODY, "table": table, "sealed": sealed, **extra}
        )
        assert refused.status_code == 422, refused.text
        names = [p["name"] for p in refused.json()["invalid_params"]]
        assert "sealed" in names or extra, refused.text
    opened = client.post(f"/v1/tables/{table}/seeds", json={"kind": "commit"}).json()
    ref = {"seed_id": opened["seed_id"], "client_seed": "c1"}
    refused = client.post(
        "/v1/tft/contests", json={**BODY, "table": table, "session": ref, "sealed": sealed}
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["invalid_params"][0]["name"] == "sealed"
    assert "a sealed roll rolls in a hash-chain seed session" in refused.json()["detail"]
    assert [e["mechanic"] for e in _log(client, table)] == ["session.commit"]


def test_a_blind_that_is_not_64_lowercase_hex_is_refused(client: httpx.Client, table: str) -> None:
    seed_id = _session(client, table)
    for blind in ("AB" * 32, "ab" * 31, "zz" * 32):
        refused = _sealed(client, table, seed_id, "c1", blind=blind)
        assert refused.status_code in (400, 422), refused.text
    assert _sealed(client, table, seed_id, "c1", audience="all").status_code in (400, 422)


def _edited(opening: Any, edit: str) -> Any:
    forged = copy.deepcopy(opening)
    if edit == "outcome":
        forged["outcome"]["victory_level"] = "forged"
    elif edit == "dice":
        forged["dice"][0]["face"] = forged["dice"][0]["face"] % forged["dice"][0]["sides"] + 1
    else:
        forged["blind"] = secrets.token_hex(32)
    return forged


def test_the_servers_incremental_verification_checks_a_reveal_after_its_roll(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    # The state the server keeps between two verifications holds the sealed rolls still
    # open: the reveal read on the second pass is checked against the roll of the first.
    seq = sealed_roll["receipt"]["seq"]
    first = client.get(f"/v1/tables/{table}/verification").json()
    assert first["ok"] and first["sealed_unrevealed"] == [seq]
    assert _reveal(client, table, seq, sealed_roll["opening"]).status_code == 200
    second = client.get(f"/v1/tables/{table}/verification").json()
    assert second["ok"], second["reason"]
    assert second["sealed_unrevealed"] == [] and second["sealed_revealed"] == 1


def test_a_retry_of_a_sealed_roll_answers_the_same_opening(
    client: httpx.Client, table: str
) -> None:
    # The retry's request holds the same blind (its fingerprint matched): the roll it
    # sealed is made again from the entry's link and opens the same commitment.
    seed_id = _session(client, table)
    sealed = {"audience": "self", "blind": secrets.token_hex(32)}
    ref = {"seed_id": seed_id, "client_seed": "c-retry"}
    body = {**BODY, "table": table, "session": ref, "sealed": sealed}
    headers = {"Idempotency-Key": "sealed-" + secrets.token_hex(8)}
    first = client.post("/v1/tft/contests", json=body, headers=headers).json()
    again = client.post("/v1/tft/contests", json=body, headers=headers).json()
    assert again["opening"] == first["opening"] and again["dice"] == first["dice"]
    assert again["receipt"]["seq"] == first["receipt"]["seq"]
    assert [e["mechanic"] for e in _log(client, table)] == ["session.commit", "sealed.roll"]


def test_listings_say_a_sealed_roll_and_its_reveal_in_words(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    assert _reveal(client, table, seq, sealed_roll["opening"]).status_code == 200
    listed = client.get(f"/v1/tables/{table}/entries").json()
    words = {e["seq"]: w["text"] for e, w in zip(listed["entries"], listed["words"], strict=True)}
    assert words[seq].startswith("Sealed tft.contest roll (shown to: roller and GM)")
    assert words[seq + 1] == f"Sealed roll at seq {seq} revealed: {sealed_roll['words']['text']}"


def test_a_hostile_opening_is_a_4xx_never_a_500(
    client: httpx.Client, table: str, sealed_roll: dict[str, Any]
) -> None:
    seq = sealed_roll["receipt"]["seq"]
    deep = '{"x":' * 3000 + "1" + "}" * 3000
    for request in (deep, '{"f":1.5}', '{"n":' + str(2**60) + "}"):
        opening = json.dumps({**sealed_roll["opening"], "request": "HERE"})
        answer = client.post(
            f"/v1/tables/{table}/sealed/{seq}/reveal",
            content='{"opening":' + opening.replace('"HERE"', request) + "}",
            headers={"content-type": "application/json"},
        )
        assert 400 <= answer.status_code < 500, answer.text
