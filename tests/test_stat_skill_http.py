"""Stat + Skill checks through real HTTP, a real server and a real Redis."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from support import chances


def test_check_with_supplied_dice(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/stat-skill/checks",
        json={
            "table": table,
            "stat": 4,
            "skill": 4,
            "tn": 12,
            "stat_name": "Muscle",
            "skill_name": "Athletics",
            "dice": {"stat": [2], "skill": [9]},
        },
    )
    assert response.status_code == 200, response.text
    outcome = response.json()["outcome"]
    assert (outcome["result"], outcome["short"]) == ("partial_success", "stat")
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


def test_contest_and_complex_check_are_one_entry_each(client: httpx.Client, table: str) -> None:
    contest = client.post(
        "/v1/stat-skill/contests",
        json={"table": table, "a": {"stat": 5, "skill": 3}, "b": {"stat": 3, "skill": 5}},
    )
    assert contest.status_code == 200, contest.text
    complex_check = client.post(
        "/v1/stat-skill/complex-checks",
        json={
            "table": table,
            "stat": 5,
            "skill": 5,
            "tn": 10,
            "required_successes": 6,
            "period": "1 day",
            "max_periods": 20,
            "seed": "repairs",
        },
    )
    assert complex_check.status_code == 200, complex_check.text
    body = complex_check.json()
    assert len(body["dice"]) == 2 * len(body["outcome"]["periods"])
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 2
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        ("/v1/stat-skill/checks", {"stat": 5, "skill": 5}, "tn"),
        (
            "/v1/stat-skill/checks",
            {"stat": 5, "skill": 5, "tn": 10, "activate_threat": "x"},
            "activate_threat",
        ),
        (
            "/v1/stat-skill/checks",
            {"stat": 5, "skill": 5, "tn": 10, "dice": {"stat": [11], "skill": [1]}},
            "dice.stat[0]",
        ),
        (
            "/v1/stat-skill/complex-checks",
            {
                "stat": 5,
                "skill": 5,
                "tn": 10,
                "required_successes": 2,
                "dice": {"stat": [9, 9, 9], "skill": [9, 9, 9]},
            },
            "dice.stat",
        ),
    ],
)
def test_bad_checks_are_422_naming_the_field(
    client: httpx.Client, table: str, path: str, payload: dict[str, Any], field: str
) -> None:
    response = client.post(path, json={**payload, "table": table})
    assert response.status_code == 422, response.text
    assert field in [p["name"] for p in response.json()["invalid_params"]]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_odds_endpoints(client: httpx.Client) -> None:
    simple = client.post("/v1/stat-skill/checks/odds", json={"stat": 5, "skill": 5, "tn": 10})
    assert simple.status_code == 200, simple.text
    assert chances(simple.json(), "result")["full_success"] == "9/25"
    complex_odds = client.post(
        "/v1/stat-skill/complex-checks/odds",
        json={"stat": 5, "skill": 5, "tn": 10, "required_successes": 4, "max_periods": 2},
    )
    assert complex_odds.status_code == 200, complex_odds.text
    assert next(iter(chances(complex_odds.json(), "completed_in"))) == 2
