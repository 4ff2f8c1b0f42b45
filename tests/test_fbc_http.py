"""Faster, Better, Cheaper through real HTTP, a real server and a real Redis."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from support import chances

PIT = {"pool": 10, "risk": 5, "dice": {"risk": [2, 1, 1, 4, 5]}}


def test_pit_climb_roll_is_adjudicated_recorded_and_verifiable(
    client: httpx.Client, table: str
) -> None:
    response = client.post("/v1/fbc/rolls", json={**PIT, "table": table})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mechanic"] == "fbc.roll"
    assert body["source"] == "supplied"
    assert [d["face"] for d in body["dice"]] == [2, 1, 1, 4, 5]
    assert body["outcome"]["successes"] == 2
    assert body["outcome"]["new_pool"] == 7
    entry = client.get(f"/v1/tables/{table}/entries/1").json()
    assert entry["outcome"] == body["outcome"]
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


def test_seeded_roll_with_slower_chance_dice_replays(client: httpx.Client, table: str) -> None:
    request = {"pool": 20, "risk": 20, "slower": 1, "seed": "slow-and-steady", "table": table}
    first = client.post("/v1/fbc/rolls", json=request).json()
    second = client.post("/v1/fbc/rolls", json=request).json()
    assert first["dice"] == second["dice"]
    sixes = sum(1 for d in first["dice"] if d["group"] == "risk" and d["face"] == 6)
    assert sum(1 for d in first["dice"] if d["group"] == "chance") == sixes
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


def test_conflict_example_over_http(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/fbc/conflicts",
        json={
            "table": table,
            "participants": [
                {"name": "Joe", "pool": 5, "risk": 5, "faster": 1, "narrate": "first"},
                {"name": "Sue", "pool": 5, "risk": 5, "convert": 1},
                {"name": "Fred", "pool": 5, "risk": 5, "narrate": "last"},
            ],
            "dice": {
                "participants": [
                    {"risk": [2, 1, 5, 1, 6]},
                    {"risk": [1, 2, 2, 3, 5]},
                    {"risk": [3, 2, 1, 4, 5]},
                ]
            },
        },
    )
    assert response.status_code == 200, response.text
    outcome = response.json()["outcome"]
    assert outcome["narration_order"] == ["Joe", "Sue", "Fred"]
    assert [p["roll"]["new_pool"] for p in outcome["participants"]] == [4, 3, 3]
    assert response.json()["receipt"]["seq"] == 1  # one audit entry for the whole conflict
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"pool": 5, "risk": 2, "faster": 1, "slower": 1}, "slower"),
        ({"pool": 5, "risk": 2, "better": 1, "worse": 1}, "worse"),
        ({"pool": 5, "risk": 2, "cheaper": 1, "expensive": 2}, "expensive"),
        ({"pool": 2, "risk": 3}, "risk"),
        ({"pool": 0, "risk": 1}, "pool"),
        ({"pool": 5, "risk": 2, "dice": {"risk": [1, 2, 3]}}, "dice.risk"),
        ({"pool": 5, "risk": 1, "dice": {"risk": [6]}, "slower": 2}, "dice.chance"),
    ],
)
def test_bad_rolls_are_422_naming_the_field(
    client: httpx.Client, table: str, payload: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/fbc/rolls", json={**payload, "table": table})
    assert response.status_code == 422, response.text
    assert field in [p["name"] for p in response.json()["invalid_params"]]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_character_sheet_validates(client: httpx.Client) -> None:
    sheet = {
        "name": "Billy Talbot",
        "traits": [
            {
                "name": "Anthropology",
                "faster": 1,
                "better": 1,
                "style": "Occult-flavored",
                "best": True,
            },
            {"name": "Lycanthropy", "cheaper": 1, "style": "Painful"},
            {"name": "Rowing", "cheaper": 1, "style": "Mechanical"},
        ],
    }
    response = client.post("/v1/fbc/characters", json=sheet)
    assert response.status_code == 200, response.text
    assert response.json()["budget"]["spent"] == 4
    sheet["traits"][2]["better"] = 1  # type: ignore[index]
    sheet["traits"][2]["faster"] = 1  # type: ignore[index]
    bad = client.post("/v1/fbc/characters", json=sheet)
    assert bad.status_code == 422
    assert bad.json()["type"].endswith("rule-violation")


def test_advancement_prices_the_purchase(client: httpx.Client) -> None:
    response = client.post(
        "/v1/fbc/advancements",
        json={
            "character": {
                "name": "Billy Talbot",
                "stage": "advanced",
                "traits": [{"name": "Rowing", "cheaper": 1, "style": "Mechanical"}],
            },
            "xp": 2,
            "purchase": {"kind": "add_adjective", "trait": "Rowing", "adjective": "cheaper"},
        },
    )
    assert response.status_code == 200, response.text
    assert (response.json()["cost"], response.json()["xp_left"]) == (2, 0)


def test_roll_odds_are_exact(client: httpx.Client) -> None:
    response = client.post("/v1/fbc/rolls/odds", json={"pool": 10, "risk": 1})
    assert response.status_code == 200, response.text
    odds = response.json()
    assert chances(odds, "failure")["failure"] == "1/3"
    assert chances(odds, "new_pool") == {
        9: "1/3",
        10: "1/2",
        11: "1/6",
    }


def test_conflict_odds_are_each_participants_roll(client: httpx.Client) -> None:
    participants = [
        {"name": "Joe", "pool": 5, "risk": 5, "faster": 1},
        {"name": "Sue", "pool": 5, "risk": 5, "convert": 1},
        {"name": "Fred", "pool": 5, "risk": 3, "narrate": "last", "better": 1},
    ]
    odds = client.post("/v1/fbc/conflicts/odds", json={"participants": participants})
    assert odds.status_code == 200, odds.text
    for index, who in enumerate(participants):
        roll = {k: v for k, v in who.items() if k not in ("name", "narrate")}
        alone = client.post("/v1/fbc/rolls/odds", json={**roll, "target": 3}).json()
        got = chances(odds.json(), f"participants[{index}].successes")
        assert got == chances(alone, "successes")
    bad = client.post(
        "/v1/fbc/conflicts/odds",
        json={"participants": [participants[0], {"name": "Sue", "pool": 2, "risk": 3}]},
    )
    assert bad.status_code == 422
    assert [p["name"] for p in bad.json()["invalid_params"]] == ["participants[1].risk"]
