"""Tribute through real HTTP, a real server and a real Redis."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from support import chances


def test_opposed_test_is_one_audited_entry(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/tribute/tests",
        json={
            "table": table,
            "reality": "d6",
            "rank": 0,
            "focus": 3,
            "burden": 2,
            "opponent": {"name": "GM", "rank": 0},
            "trash_is_treasure": True,
            "failure_counts": True,
            "dice": {
                "focus": [5, 3, 2],
                "burden": [5, 5],
                "opponent_focus": [4],
                "opponent_burden": [2],
            },
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mechanic"] == "tribute.test"
    assert [d["group"] for d in body["dice"]] == [
        "focus",
        "focus",
        "focus",
        "burden",
        "burden",
        "opponent.focus",
        "opponent.burden",
    ]
    assert body["outcome"]["outcome"] == "fail"
    assert body["outcome"]["opposition_result"] == 2
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


def test_seeded_d12_test_replays(client: httpx.Client, table: str) -> None:
    request = {
        "table": table,
        "reality": "d12",
        "rank": 2,
        "focus": 6,
        "burden": 6,
        "difficulty": 3,
        "seed": "over-the-top",
    }
    first = client.post("/v1/tribute/tests", json=request).json()
    second = client.post("/v1/tribute/tests", json=request).json()
    assert first["dice"] == second["dice"]
    assert first["outcome"] == second["outcome"]
    assert all(d["sides"] == 12 for d in first["dice"])


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"reality": "d6", "rank": 0}, "difficulty"),
        ({"reality": "d20", "rank": 0, "difficulty": 1}, "reality"),
        ({"reality": "d6", "rank": 0, "focus": 7, "difficulty": 1}, "focus"),
        ({"reality": "d6", "rank": 0, "difficulty": 1, "failure_counts": True}, "failure_counts"),
        (
            {"reality": "d6", "rank": 0, "difficulty": 1, "choice": {"focus": 1, "burden": 1}},
            "choice",
        ),
        (
            {"reality": "d4", "rank": 0, "difficulty": 1, "dice": {"focus": [5], "burden": [1]}},
            "dice.focus[0]",
        ),
    ],
)
def test_bad_tests_are_422_naming_the_field(
    client: httpx.Client, table: str, payload: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/tribute/tests", json={**payload, "table": table})
    assert response.status_code == 422, response.text
    assert field in [p["name"] for p in response.json()["invalid_params"]]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_odds_of_one_die_each(client: httpx.Client) -> None:
    response = client.post(
        "/v1/tribute/tests/odds", json={"reality": "d6", "rank": 0, "difficulty": 0}
    )
    assert response.status_code == 200, response.text
    odds = response.json()
    assert chances(odds, "outcome") == {"win": "5/12", "match": "1/6", "fail": "5/12"}
    assert chances(odds, "profit") == {0: "1/1"}
