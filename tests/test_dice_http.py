"""Dice formulas through real HTTP, a real server and a real Redis: one more mechanic, with
the same envelope, seeds, sessions, supplied dice, audit entry and verifiers."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx

from fairroll.chain import previous
from fairroll.mechanics import replay_entry
from fairroll.randomness import committed_seed, derive_faces
from support import TEST_ROOT, chances, verified_export

ROOT = Path(__file__).resolve().parent.parent


def test_a_formula_roll_is_a_signed_entry_every_verifier_replays(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    answers = [
        client.post(
            "/v1/dice/rolls", json={"table": table, "formula": formula, "seed": f"s{i}"}
        ).json()
        for i, formula in enumerate(["4d6kh3+2 # Strength", "6d10>=8!", "4dF+1", "3d6r1!"])
    ]
    first = answers[0]
    assert first["mechanic"] == "dice.roll"
    assert first["source"] == "chosen"
    assert [d["group"] for d in first["dice"]] == ["d6"] * 4
    assert [d["face"] for d in first["dice"]] == list(derive_faces("s0", sides=6, count=4))
    kept = sorted((d["face"] for d in first["dice"]), reverse=True)[:3]
    assert first["outcome"]["total"] == sum(kept) + 2
    assert first["words"]["asked"] == "Strength: 4d6kh3+2"
    fate = answers[2]
    assert {d["sides"] for d in fate["dice"]} == {3}  # a Fate die is drawn as a d3
    assert [d["value"] for d in fate["outcome"]["terms"][0]["dice"]] == [
        d["face"] - 2 for d in fate["dice"]
    ]

    entry = client.get(f"/v1/tables/{table}/entries/{first['receipt']['seq']}").json()
    assert entry["request"] == {"formula": "4d6kh3+2 # Strength", "dialect": "roll20"}
    assert entry["outcome"] == first["outcome"]

    export, replayed = verified_export(client, table, tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "outcomes" in replayed.stdout
    stdlib = subprocess.run(
        [
            sys.executable,
            ROOT / "scripts" / "verify_roll.py",
            "--export",
            export,
            "--root",
            TEST_ROOT,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert stdlib.returncode == 0, stdlib.stdout + stdlib.stderr
    online = client.get(f"/v1/tables/{table}/verification").json()
    assert online["ok"] is True and online["outcomes_replayed"] is True


def test_an_operator_who_records_a_better_total_is_caught_by_the_replay(
    client: httpx.Client, table: str
) -> None:
    # The operator holds the signing key, so a re-signed entry passes every hash and
    # signature; only the rules, replayed from the recorded dice, say the total is false.
    answer = client.post(
        "/v1/dice/rolls", json={"table": table, "formula": "1d20+5", "seed": "attack"}
    ).json()
    entry = client.get(f"/v1/tables/{table}/entries/{answer['receipt']['seq']}").json()

    def replayed(entry: dict[str, Any], seed: str | None = None) -> tuple[Any, Any]:
        dice, outcome = replay_entry(entry, seed)
        return json.loads(json.dumps(dice)), json.loads(json.dumps(outcome))

    assert replayed(entry)[1] == entry["outcome"]
    assert replayed(entry, "attack") == (entry["dice"], entry["outcome"])
    entry["outcome"]["total"] += 1
    assert replayed(entry)[1] != entry["outcome"]
    better_dice = dict(entry, dice=[dict(entry["dice"][0], face=20)])
    assert replayed(better_dice, "attack")[0] != better_dice["dice"]  # not the seed's


def test_supplied_dice_are_given_by_die(client: httpx.Client, table: str) -> None:
    answer = client.post(
        "/v1/dice/rolls",
        json={
            "table": table,
            "formula": "1d20+2d6+1dF",
            "dice": {"d20": [14], "d6": [3, 4], "dF": [-1]},
        },
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["source"] == "supplied"
    assert body["outcome"]["total"] == 14 + 7 - 1
    assert [(d["group"], d["face"]) for d in body["dice"]] == [
        ("d20", 14),
        ("d6", 3),
        ("d6", 4),
        ("dF", 1),
    ]
    short = client.post(
        "/v1/dice/rolls", json={"table": table, "formula": "3d6", "dice": {"d6": [1, 2]}}
    )
    assert short.status_code == 422
    assert short.json()["invalid_params"][0]["name"] == "dice.d6"
    off = client.post(
        "/v1/dice/rolls", json={"table": table, "formula": "1dF", "dice": {"dF": [2]}}
    )
    assert off.status_code == 422
    assert off.json()["invalid_params"][0]["name"].startswith("dice.dF")
    head = client.get(f"/v1/tables/{table}/entries").json()["head_seq"]
    assert head == 1  # the refusals changed nothing


def test_a_bad_formula_is_a_422_naming_the_offset_and_records_nothing(
    client: httpx.Client, table: str
) -> None:
    for formula, offset in [("4d6x", 3), ("2d20kh +", 8), ("100d6!r1", 0), ("d6r<6", 2)]:
        answer = client.post("/v1/dice/rolls", json={"table": table, "formula": formula})
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert problem["invalid_params"][0]["name"] == "formula"
        assert problem["invalid_params"][0]["reason"].startswith(f"formula, at offset {offset}:")
    too_long = client.post("/v1/dice/rolls", json={"table": table, "formula": "1d6+" * 60})
    assert too_long.status_code == 422
    assert too_long.json()["invalid_params"][0]["name"] == "formula"
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_a_roll_holding_more_dice_than_fairroll_records_is_refused_and_recorded_nowhere(
    client: httpx.Client, table: str
) -> None:
    """``100d1000!>2`` typically rolls some 64,000 dice (~7 MB of entry): it is refused,
    a 422 naming ``formula`` and the limit, with nothing appended. Its dice follow from
    the seed, so the same seed is refused again; in a session, the same nonce, which the
    refusal did not take."""
    monster = "100d1000!>2"
    for _ in range(2):
        answer = client.post(
            "/v1/dice/rolls", json={"table": table, "formula": monster, "seed": "same"}
        )
        assert answer.status_code == 422, answer.text
        (param,) = answer.json()["invalid_params"]
        assert param["name"] == "formula"
        assert "fairroll records at most 1001 dice a roll" in param["reason"]
    session = client.post(f"/v1/tables/{table}/seeds").json()
    seat = {"seed_id": session["seed_id"], "client_seed": "player-1"}
    head = client.get(f"/v1/tables/{table}/entries").json()["head_seq"]
    refused = client.post(
        "/v1/dice/rolls", json={"table": table, "formula": monster, "session": seat}
    )
    assert refused.status_code == 422, refused.text
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == head
    answer = client.post(
        "/v1/dice/rolls", json={"table": table, "formula": "1d20", "session": seat}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["session"]["nonce"] == 1


def test_a_formula_rolls_in_a_seed_session_with_its_nonce(client: httpx.Client, table: str) -> None:
    session = client.post(f"/v1/tables/{table}/seeds").json()
    answer = client.post(
        "/v1/dice/rolls",
        json={
            "table": table,
            "formula": "2d20kh1 # Advantage",
            "session": {"seed_id": session["seed_id"], "client_seed": "player-1"},
        },
    ).json()
    assert answer["source"] == "committed"
    assert answer["session"]["nonce"] == 1
    # A hash-chain session (the default): the roll reveals its link, which hashes to the
    # committed anchor, and the dice derive from it at once.
    link = answer["session"]["link"]
    assert previous(link) == session["commitment"]
    seed = committed_seed(link, "player-1", 1)
    assert [d["face"] for d in answer["dice"]] == list(derive_faces(seed, sides=20, count=2))


def test_odds_answer_exactly_and_refuse_what_is_too_large(client: httpx.Client) -> None:
    odds = client.post("/v1/dice/rolls/odds", json={"formula": "2d6"})
    assert odds.status_code == 200, odds.text
    body = odds.json()
    assert body["mechanic"] == "dice.roll"
    totals = chances(body, "total")
    assert Fraction(totals[7]) == Fraction(1, 6)
    assert sum(Fraction(p) for p in totals.values()) == 1
    exploding = chances(
        client.post("/v1/dice/rolls/odds", json={"formula": "10d6!"}).json(), "total"
    )
    assert 0 < Fraction(exploding["beyond"]) <= Fraction(1, 10**12)
    assert sum(Fraction(p) for p in exploding.values()) == 1
    refused = client.post("/v1/dice/rolls/odds", json={"formula": "100d1000"})
    assert refused.status_code == 422
    assert "different totals" in refused.json()["invalid_params"][0]["reason"]
    bad = client.post("/v1/dice/rolls/odds", json={"formula": "4d6x"})
    assert bad.status_code == 422
    assert bad.json()["invalid_params"][0]["reason"].startswith("formula, at offset 3")


def test_the_spec_says_the_limits(client: httpx.Client) -> None:
    spec = client.get("/schema/openapi.json").json()
    formula = spec["components"]["schemas"]["Formula"]["properties"]["formula"]
    assert formula["maxLength"] == 200
    limits = formula["x-fairroll-limits"]
    assert limits["total_dice"] == 100
    odds = spec["paths"]["/v1/dice/rolls/odds"]["post"]
    assert "20001 values" in odds["description"]
    assert "400 ms" in odds["description"]
    # fairroll's own, refused before a die is rolled: 100 dice each exploding 1,000 times.
    assert limits["rolled_dice_at_worst"] == 100_100
    # and as the dice fall: one die exploded 1,000 times, the most a roll may hold.
    assert limits["held_dice"] == 1001
    assert "`beyond`" in odds["description"]
    # Each VTT's own, where its roller stops a die or fails the roll.
    assert limits["explosion_depth"] == 1000
    assert limits["vtt"] == {
        "roll20": {"roller": "rpg-dice-roller", "depth": 1000},
        "foundry": {"roller": "Foundry VTT", "depth": 1000, "checked": 1000},
        "avrae": {"roller": "d20", "depth": 999, "rolled": 1000},
    }
