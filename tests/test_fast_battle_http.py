"""The Fast Battle System through real HTTP, a real server and a real Redis."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from support import chances

ZIPPY = {
    "name": "Zippy the Mean",
    "allocation": {"st": 2, "qk": 1, "in": 1, "ma": 1, "mr": 1},
    "bonus": ["st", "mr", "qk"],
    "buy": ["Standard Issue Sword", "Light Robe", "Potion of Cure Light Wounds"],
}


def test_zippy_is_created_with_every_flip_recorded(client: httpx.Client, table: str) -> None:
    response = client.post(
        "/v1/fast-battle/characters",
        json={**ZIPPY, "table": table, "dice": {"bonus": [2, 2, 1], "hp": [2, 1, 1]}},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    sheet = body["outcome"]["character"]
    assert (sheet["st"], sheet["qk"], sheet["in"], sheet["ma"], sheet["mr"]) == (3, 1, 1, 1, 2)
    assert (sheet["max_hp"], body["outcome"]["gold"]) == (6, 2)
    assert [d["group"] for d in body["dice"]] == ["bonus"] * 3 + ["hp"] * 3
    assert all(d["sides"] == 2 for d in body["dice"])
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


def fighter(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "st": 3, "qk": 2, "in": 1, "ma": 2, "mr": 1, "max_hp": 6, **fields}


def test_battle_is_one_audited_entry_that_replays(client: httpx.Client, table: str) -> None:
    request = {
        "table": table,
        "seed": "arena",
        "fighters": [
            fighter(
                "Zippy",
                qk=3,
                weapon="Standard Issue Sword",
                armor="Light Robe",
                potions=["Potion of Cure Light Wounds"],
                tactic={"heal_below": 3},
            ),
            fighter(
                "Grub",
                weapon="Standard Issue Mace",
                spells=["Spark"],
                tactic={"cast_spell": "Spark"},
            ),
        ],
    }
    first = client.post("/v1/fast-battle/battles", json=request)
    assert first.status_code == 200, first.text
    second = client.post("/v1/fast-battle/battles", json=request).json()
    assert first.json()["outcome"] == second["outcome"]
    assert first.json()["outcome"]["winner"] in ("Zippy", "Grub")
    assert client.get(f"/v1/tables/{table}/verification").json()["ok"] is True


def test_attack_spell_initiative_potion_rewards_and_level_up(
    client: httpx.Client, table: str
) -> None:
    attack = client.post(
        "/v1/fast-battle/attacks",
        json={
            "table": table,
            "attacker": fighter("A", weapon="Standard Issue Sword"),
            "defender": fighter("B", armor="Light Robe"),
            "dice": {"attack": [2, 2], "armor": [1]},
        },
    )
    assert attack.status_code == 200, attack.text
    assert attack.json()["outcome"]["damage"] == 2
    spell = client.post(
        "/v1/fast-battle/spells",
        json={
            "table": table,
            "attacker": fighter("A", spells=["Spark"]),
            "defender": fighter("B"),
            "spell": "Spark",
        },
    )
    assert spell.status_code == 200, spell.text
    initiative = client.post(
        "/v1/fast-battle/initiatives",
        json={"table": table, "fighters": [fighter("A"), fighter("B", qk=5)]},
    )
    assert initiative.json()["outcome"]["order"] == ["B", "A"]
    potion = client.post(
        "/v1/fast-battle/potions",
        json={"fighter": fighter("A", hp=2), "potion": "Potion of Cure Light Wounds"},
    )
    assert potion.json()["hp_after"] == 5
    rewards = client.post("/v1/fast-battle/rewards", json={"winner_level": 3, "loser_level": 4})
    assert rewards.json() == {
        "winner_gold": 20,
        "loser_gold": 7,
        "winner_xp": "1.5",
        "loser_xp": "0",
    }
    level = client.post(
        "/v1/fast-battle/level-ups",
        json={
            "table": table,
            "character": {**fighter("A"), "xp": "2.5"},
            "xp_gained": "0.5",
            "assign": ["st"],
        },
    )
    assert level.status_code == 200, level.text
    assert level.json()["outcome"]["character"]["level"] == 2
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 4


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        (
            "/v1/fast-battle/spells",
            {
                "attacker": fighter("A", ma=0, spells=["Magic Missile"]),
                "defender": fighter("B"),
                "spell": "Magic Missile",
            },
            "spell",
        ),
        (
            "/v1/fast-battle/attacks",
            {"attacker": fighter("A", weapon="Vorpal"), "defender": fighter("B")},
            "attacker.weapon",
        ),
        ("/v1/fast-battle/level-ups", {"character": {**fighter("A"), "xp": "2.7"}}, "character.xp"),
        (
            "/v1/fast-battle/attacks",
            {
                "attacker": fighter("A", weapon="Standard Issue Sword"),
                "defender": fighter("B"),
                "dice": {"attack": [2], "armor": []},
            },
            "dice.attack",
        ),
    ],
)
def test_bad_actions_are_422_naming_the_field(
    client: httpx.Client, table: str, path: str, payload: dict[str, Any], field: str
) -> None:
    response = client.post(path, json={**payload, "table": table})
    assert response.status_code == 422, response.text
    assert field in [p["name"] for p in response.json()["invalid_params"]]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_odds_and_store(client: httpx.Client) -> None:
    attack = client.post(
        "/v1/fast-battle/attacks/odds",
        json={
            "attacker": fighter("A", weapon="Standard Issue Sword"),
            "defender": fighter("B", armor="Light Robe", hp=1),
        },
    )
    assert attack.status_code == 200, attack.text
    assert chances(attack.json(), "knock_out")["knocked_out"] == "1/2"
    battle = client.post(
        "/v1/fast-battle/battles/odds",
        json={
            "fighters": [
                fighter("A", max_hp=2, weapon="Standard Issue Sword"),
                fighter("B", max_hp=2, weapon="Standard Issue Sword"),
            ],
            "max_turns": 6,
        },
    )
    assert battle.status_code == 200, battle.text
    assert battle.json()["exact"] is True
    store = client.get("/v1/fast-battle/store").json()
    assert "not the Fast Battle System text" in store["notice"]
    assert {"name": "Standard Issue Sword", "af": 2}.items() <= store["weapons"][0].items()


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        (
            "/v1/fast-battle/spells/odds",
            {
                "attacker": fighter("A", ma=0, spells=["Magic Missile"]),
                "defender": fighter("B"),
                "spell": "Magic Missile",
            },
            "spell",
        ),
        ("/v1/fast-battle/initiatives/odds", {"fighters": [fighter("A"), fighter("A")]}, None),
        ("/v1/fast-battle/characters/odds", {**ZIPPY, "allocation": {"st": 7}}, "allocation"),
        (
            "/v1/fast-battle/level-ups/odds",
            {"character": {**fighter("A"), "xp": "2.5"}, "xp_gained": "1", "assign": []},
            "assign",
        ),
    ],
)
def test_odds_refuse_what_the_roll_refuses(
    client: httpx.Client, table: str, path: str, payload: dict[str, Any], field: str | None
) -> None:
    odds = client.post(path, json=payload)
    roll = client.post(path.removesuffix("/odds"), json={**payload, "table": table})
    assert odds.status_code == roll.status_code == 422, (odds.text, roll.text)
    assert odds.json()["invalid_params"] == roll.json()["invalid_params"]
    if field:
        assert field in [p["name"] for p in odds.json()["invalid_params"]]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_coin_odds_over_http(client: httpx.Client) -> None:
    spark = client.post(
        "/v1/fast-battle/spells/odds",
        json={
            "attacker": fighter("Grub", ma=3, spells=["Spark"]),
            "defender": fighter("Zippy", mr=0, hp=2),
            "spell": "Spark",
        },
    ).json()
    # SP 2 flips + 2 MA above the minimum against MR 0 and no FRM: nullified only if
    # 0 >= half of 2..4, never.
    assert chances(spark, "takes_effect")["takes_effect"] == "1/1"
    assert chances(spark, "knock_out")["knocked_out"] == "1/1"
    first = client.post(
        "/v1/fast-battle/initiatives/odds",
        json={"fighters": [fighter("A", qk=2), fighter("B", qk=2), fighter("C", qk=3)]},
    ).json()
    assert [chances(first, f"fighters[{i}].place") for i in range(3)] == [
        {2: "1/2", 3: "1/2"},
        {2: "1/2", 3: "1/2"},
        {1: "1/1"},
    ]
    assert chances(first, "first") == {"A": "0/1", "B": "0/1", "C": "1/1"}
    hp = client.post("/v1/fast-battle/characters/odds", json=ZIPPY).json()
    assert chances(hp, "bonus_points") == {0: "1/8", 1: "3/8", 2: "3/8", 3: "1/8"}
