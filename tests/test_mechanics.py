"""Each mechanic is declared once (``fairroll.mechanics``), and everything follows from it:
routes, spec, ``GET /v1/systems``, odds that refuse what the roll refuses, words on the
server, request paths in errors, one strict decode of each body."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairroll.api.strict import _may_repeat_a_key
from fairroll.audit.verify import DuplicateKeyError, loads_strict
from fairroll.mechanics import MECHANICS, UnknownMechanicError, words_of
from fairroll.randomness import SeededDice, SuppliedDice
from fairroll.rules import RuleError, stat_skill, tft, tribute
from fairroll.spec.examples import load_examples
from support import LiveServer, chances, run_node

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "tests" / "plugins"
ENVELOPE = {"table", "seed", "dice", "session"}
BY_OPERATION = {m.operation_id: m for m in MECHANICS.values()}


@pytest.fixture(scope="module")
def toy_server(redis_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = os.pathsep.join(p for p in (str(PLUGINS), os.environ.get("PYTHONPATH", "")) if p)
    server = LiveServer(
        redis_server.url,
        tmp_path_factory.mktemp("toy") / "server.log",
        env={"FAIRROLL_SYSTEMS": "toy_coins", "PYTHONPATH": path},
    )
    yield server
    server.stop()


def test_a_system_declared_in_one_file_is_served_listed_specified_and_verified(
    toy_server: LiveServer, table: str, tmp_path: Path
) -> None:
    """tests/plugins/toy_coins.py declares rules, odds and words; nothing else names it."""
    with httpx.Client(base_url=toy_server.url, timeout=10) as client:
        rolled = client.post("/v1/toy/flips", json={"coins": 3, "need": 2, "table": table})
        assert rolled.status_code == 200, rolled.text
        body = rolled.json()
        assert body["mechanic"] == "toy.flip"
        assert body["words"]["asked"] == "3 coins, needing 2"
        assert body["words"]["success"] is body["outcome"]["success"]
        supplied = client.post(
            "/v1/toy/flips", json={"coins": 2, "table": table, "dice": {"coins": [2, 2]}}
        ).json()
        assert supplied["words"] == {
            "asked": "2 coins, needing 1",
            "text": "2 heads: made it",
            "success": True,
            "partial": False,
            "critical": True,
            "catastrophic": False,
            "victor": None,
        }
        odds = client.post("/v1/toy/flips/odds", json={"coins": 3}).json()
        assert chances(odds, "heads") == {0: "1/8", 1: "3/8", 2: "3/8", 3: "1/8"}
        # Odds refuse what the roll refuses, naming the same field.
        refused = client.post("/v1/toy/flips/odds", json={"coins": 1, "need": 2})
        roll_refused = client.post("/v1/toy/flips", json={"coins": 1, "need": 2, "table": table})
        assert refused.status_code == roll_refused.status_code == 422
        assert refused.json()["invalid_params"] == roll_refused.json()["invalid_params"]

        systems = client.get("/v1/systems").json()["systems"]
        toy = next(s for s in systems if s["slug"] == "toy")
        assert toy["mechanics"][0]["roll"] == {
            "method": "POST",
            "path": "/v1/toy/flips",
            "operation_id": "rollToyFlip",
            "summary": "Flip coins, needing heads",
        }
        assert toy["mechanics"][0]["dice"] == [{"path": "coins", "sides": 2, "max_dice": 10}]

        spec = client.get("/schema/openapi.json").json()
        assert spec["paths"]["/v1/toy/flips"]["post"]["operationId"] == "rollToyFlip"
        assert spec["paths"]["/v1/toy/flips/odds"]["post"]["operationId"] == "toyFlipOdds"
        assert "ToyFlipRequest" in spec["components"]["schemas"]
        assert "toy" in {tag["name"] for tag in spec["tags"]}

        page = client.get(f"/v1/tables/{table}/entries").json()
        assert [w["text"] for w in page["words"]] == [body["words"]["text"], "2 heads: made it"]
        verified = client.get(f"/v1/tables/{table}/verification").json()
        assert verified["ok"] is True, verified

    # The page builds its form from the spec: the toy is one of its roll operations.
    (tmp_path / "openapi.json").write_text(json.dumps(spec))
    forms = run_node(ROOT / "tests" / "js" / "roll_operations.mjs", tmp_path / "openapi.json")
    assert {"id": "rollToyFlip", "system": "toy", "odds": "toyFlipOdds"} in forms


def test_the_systems_listed_are_the_declared_ones(client: httpx.Client) -> None:
    systems = client.get("/v1/systems").json()["systems"]
    assert [s["slug"] for s in systems] == [
        "fbc",
        "tribute",
        "stat-skill",
        "fast-battle",
        "tft",
        "dice",
    ]
    listed = {m["name"] for s in systems for m in s["mechanics"]}
    assert listed == set(MECHANICS)
    conflict = next(m for s in systems for m in s["mechanics"] if m["name"] == "fbc.conflict")
    assert [d["path"] for d in conflict["dice"]] == [
        "participants[].risk",
        "participants[].chance",
        "tiebreak",
    ]
    formula = next(m for s in systems for m in s["mechanics"] if m["name"] == "dice.roll")
    assert {d["path"]: d["sides"] for d in formula["dice"]} == {
        "d2": 2,
        "d3": 3,
        "d4": 4,
        "d6": 6,
        "d8": 8,
        "d10": 10,
        "d12": 12,
        "d20": 20,
        "d100": 100,
        "dF": 3,
    }


def _input(operation: str, request: dict[str, Any]) -> Any:
    mechanic = BY_OPERATION[operation]
    fields = {k: v for k, v in request.items() if k not in ENVELOPE}
    return mechanic, msgspec.convert(fields, mechanic.input_type)


ROLL_EXAMPLES = [
    e for e in load_examples() if e.operation in BY_OPERATION and e.request is not None
]


@pytest.mark.parametrize("example", ROLL_EXAMPLES, ids=lambda e: f"{e.operation}/{e.name}")
def test_every_roll_example_has_whole_odds_and_the_words_it_was_answered_with(
    example: Any,
) -> None:
    mechanic, given = _input(example.operation, example.request)
    odds = mechanic.odds_of(given)
    assert odds.mechanic == mechanic.name
    for distribution in odds.distributions:
        total = sum(Fraction(c.probability.exact) for c in distribution.chances)
        assert total == 1, (distribution.name, total)
    outcome = msgspec.convert(example.response["outcome"], mechanic.outcome_type)
    assert msgspec.to_builtins(mechanic.read(given, outcome)) == example.response["words"]


REFUSED = [
    ("fbc.roll", {"pool": 2, "risk": 3}, "risk"),
    (
        "fbc.conflict",
        {
            "participants": [
                {"name": "Jo", "pool": 3, "risk": 1},
                {"name": "Jo", "pool": 3, "risk": 1},
            ]
        },
        "participants[1].name",
    ),
    (
        "fbc.conflict",
        {
            "participants": [
                {"name": "Jo", "pool": 3, "risk": 1},
                {"name": "Al", "pool": 1, "risk": 2},
            ]
        },
        "participants[1].risk",
    ),
    ("tribute.test", {"reality": "d6", "rank": 0}, "difficulty"),
    (
        "tribute.test",
        {"reality": "d6", "rank": 0, "difficulty": 1, "failure_counts": True},
        "failure_counts",
    ),
    (
        "tribute.test",
        {"reality": "d6", "rank": 0, "difficulty": 1, "choice": {"focus": 1, "burden": 1}},
        "choice",
    ),
    ("tft.contest", {"a": {"talents": 1}, "b": {"attribute": 9}}, "a.attribute"),
]


@pytest.mark.parametrize(("name", "request_", "field"), REFUSED)
def test_odds_refuse_exactly_what_the_roll_refuses(
    name: str, request_: dict[str, Any], field: str
) -> None:
    mechanic = MECHANICS[name]
    given = msgspec.convert(request_, mechanic.input_type)
    with pytest.raises(RuleError) as rolled:
        mechanic.resolve(given, SeededDice("refused"))
    with pytest.raises(RuleError) as odds:
        mechanic.odds_of(given)
    assert rolled.value.field == odds.value.field == field
    assert str(rolled.value) == str(odds.value)


def test_words_carry_flags_a_bot_can_act_on() -> None:
    # "If the roll is a partial success, the threat becomes a wild card".
    check = stat_skill.Check(stat=5, skill=0, tn=10, fate_dice=1, activate_threat="always")
    outcome = stat_skill.resolve_check(check, SuppliedDice({"stat": [5], "skill": [5]}))
    words = MECHANICS["stat-skill.check"].read(check, outcome)
    assert (words.text, words.success, words.partial, words.critical) == (
        "Wild card",
        True,
        True,
        False,
    )
    contest = tft.Contest(
        a=tft.Contestant(name="Roth", dice_count=2), b=tft.Contestant(dice_count=1)
    )
    won = tft.resolve_contest(contest, SuppliedDice({"a": [6, 1], "b": [3]}))
    words = MECHANICS["tft.contest"].read(contest, won)
    assert (words.text, words.victor, words.success) == ("Roth wins", "a", None)
    # "when you Match, both parties get to apply their Effects": a partial success.
    test = tribute.Test(reality="d6", rank=0, difficulty=0)
    matched = tribute.resolve_test(test, SuppliedDice({"focus": [3], "burden": [3]}))
    words = MECHANICS["tribute.test"].read(test, matched)
    assert (words.success, words.partial) == (True, True)
    assert words.text.startswith("Match")


def test_an_unknown_mechanic_has_no_words_anywhere() -> None:
    with pytest.raises(UnknownMechanicError):
        words_of("nope.roll", {}, {})
    said = run_node(
        ROOT / "tests" / "js" / "words_unknown.mjs", ROOT / "service/fairroll/page/static/words.js"
    )
    assert said["threw"] and "no words" in said["message"]


def test_supplied_dice_errors_name_request_paths(client: httpx.Client, table: str) -> None:
    conflict = {
        "table": table,
        "participants": [
            {"name": "Jo", "pool": 3, "risk": 1},
            {"name": "Al", "pool": 3, "risk": 2},
        ],
        "dice": {"participants": [{"risk": [4]}, {"risk": [4]}]},
    }
    refused = client.post("/v1/fbc/conflicts", json=conflict)
    assert refused.status_code == 422, refused.text
    assert refused.json()["invalid_params"][0]["name"] == "dice.participants[1].risk"
    opposed = {
        "table": table,
        "reality": "d6",
        "rank": 0,
        "opponent": {"rank": 0},
        "dice": {"focus": [3], "burden": [2]},
    }
    refused = client.post("/v1/tribute/tests", json=opposed)
    assert refused.status_code == 422, refused.text
    assert refused.json()["invalid_params"][0]["name"] == "dice.opponent_focus"
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0


def test_a_body_is_decoded_once_strictly(client: httpx.Client, table: str) -> None:
    """Integral numbers are integers (as JSON Schema counts them); a string is not one; a
    key twice, however it is spelt, is refused."""
    nine = client.post("/v1/fbc/rolls", json={"table": table, "pool": 9.0, "risk": 1})
    assert nine.status_code == 200, nine.text
    assert nine.json()["outcome"]["pool_before"] == 9
    text = client.post("/v1/fbc/rolls", json={"table": table, "pool": "9", "risk": 1})
    assert text.status_code == 422
    assert text.json()["invalid_params"][0]["name"] == "pool"
    escaped = b'{"table": "%s", "pool": 2, "risk": 1, "\\u0070ool": 9}' % table.encode()
    refused = client.post(
        "/v1/fbc/rolls", content=escaped, headers={"Content-Type": "application/json"}
    )
    assert refused.status_code == 400
    assert "twice" in refused.json()["detail"]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


_KEYS = st.sampled_from(["a", "b", "ab", 'q"', "s\\", "é", "}", "{", ":", "x y"])


@st.composite
def _objects(draw: st.DrawFn, depth: int = 0) -> str:
    members = []
    for _ in range(draw(st.integers(0, 4))):
        key = json.dumps(draw(_KEYS), ensure_ascii=draw(st.booleans()))
        leaf = st.one_of(
            st.integers(-5, 5).map(str),
            _KEYS.map(json.dumps),
            st.just("[1, {}]"),
        )
        value = draw(_objects(depth + 1)) if depth < 2 and draw(st.booleans()) else draw(leaf)
        space = draw(st.sampled_from(["", " ", "\n"]))
        members.append(f"{key}{space}:{space}{value}")
    return "{" + ",".join(members) + "}"


@settings(max_examples=300, deadline=None)
@given(_objects())
def test_the_quick_key_scan_never_misses_a_key_given_twice(text: str) -> None:
    """The scan that spares most bodies the exact duplicate-key check says "maybe" for
    every body the exact check refuses, however its keys are spelt."""
    body = text.encode()
    try:
        loads_strict(body)
    except DuplicateKeyError:
        assert _may_repeat_a_key(body)
