"""The spec's examples: one on every operation, each valid, each what the server answers."""

from __future__ import annotations

import json
from base64 import b64decode
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from fairroll.spec.examples import SpecExample, load_examples

SPEC = json.loads((Path(__file__).parents[1] / "openapi" / "openapi.json").read_text())
EXAMPLES = load_examples()
#: Roll examples with supplied dice or a seed give the same dice and outcome every time.
#: Sent again and compared: every example with a body but a new table's or a new seed
#: session's (random ids and a fresh chain), and a sealed roll's reveal (of a roll in one).
REPLAYED = [
    e
    for e in EXAMPLES
    if e.request is not None
    and e.operation
    not in {"createTable", "createSeedSession", "cosignTableCheckpoint", "revealSealedRoll"}
]


def operations() -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        op["operationId"]: (method.upper(), path, op)
        for path, item in SPEC["paths"].items()
        for method, op in item.items()
    }


def success_schema(operation: dict[str, Any]) -> dict[str, Any]:
    status = next(s for s in operation["responses"] if s.startswith("2"))
    content = operation["responses"][status]["content"]
    schema: dict[str, Any] = next(iter(content.values()))["schema"]
    return schema


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator({**schema, "components": SPEC["components"]})


def media_of(op: dict[str, Any]) -> str:
    """The media type of an operation's success answer."""
    ok = next(r for status, r in op["responses"].items() if status.startswith("2"))
    return next(iter(ok.get("content", {"": None})))


def test_every_operation_has_an_example_with_a_response() -> None:
    by_operation = {e.operation for e in EXAMPLES if e.response is not None}
    assert set(operations()) - by_operation == set()


def test_every_json_body_has_a_request_example_in_the_spec() -> None:
    for op_id, (_method, _path, op) in operations().items():
        body = op.get("requestBody", {}).get("content", {})
        for media in body.values():
            assert media.get("examples"), op_id


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.operation}/{e.name}")
def test_examples_match_their_schemas(example: SpecExample) -> None:
    _method, _path, op = operations()[example.operation]
    if example.request is not None:
        body = op["requestBody"]["content"]["application/json"]["schema"]
        errors = list(validator(body).iter_errors(example.request))
        assert errors == [], [e.message for e in errors]
    schema = success_schema(op)
    if example.operation == "streamTableEvents":  # events: each entry's data is an entry
        data = [
            json.loads(line[6:]) for line in example.response.split("\n") if line[:6] == "data: "
        ]
        item = validator({"$ref": "#/components/schemas/Entry"})
        assert [e["entry"]["seq"] for e in data] == [1, 2]
        assert all(item.is_valid(e["entry"]) and e["words"]["text"] for e in data)
    elif media_of(op) == "text/plain":  # a signed note: origin, size, root, signatures
        origin, size, root = example.response.split("\n")[:3]
        assert origin.startswith("fairroll/") and int(size) > 0 and len(b64decode(root)) == 32
        assert "\n\n\u2014 " in example.response
    elif media_of(op) in {"application/octet-stream", "application/zip"}:  # in base64
        assert b64decode(example.response, validate=True)
    elif isinstance(example.response, str):  # NDJSON: every line is an entry
        lines = [json.loads(line) for line in example.response.split("\n") if line]
        item = validator({"$ref": "#/components/schemas/Entry"})
        assert lines
        assert all(item.is_valid(line) for line in lines)
    else:
        errors = list(validator(schema).iter_errors(example.response))
        assert errors == [], [e.message for e in errors]


@pytest.mark.parametrize("example", REPLAYED, ids=lambda e: f"{e.operation}/{e.name}")
def test_the_server_still_answers_each_example_as_documented(
    client: httpx.Client, example: SpecExample
) -> None:
    method, path, _op = operations()[example.operation]
    response = client.request(method, path, json=example.request)
    assert response.status_code == 200, response.text
    answer = response.json()
    expected = example.response
    if "receipt" in expected:  # a new entry on the default table: another seq and hash
        assert answer.pop("receipt")["table"] == expected["receipt"]["table"]
        expected = {k: v for k, v in expected.items() if k != "receipt"}
    assert answer == expected


def test_the_store_example_is_the_store(client: httpx.Client) -> None:
    (example,) = [e for e in EXAMPLES if e.operation == "getFastBattleStore"]
    assert client.get("/v1/fast-battle/store").json() == example.response


def test_the_audit_examples_hang_together() -> None:
    by_name = {(e.operation, e.name): e for e in EXAMPLES}
    entry = by_name["getTableEntry", "roth-vs-sheena"].response
    roll = by_name["rollTftContest", "roth-vs-sheena"].response
    assert entry["entry_hash"] == roll["receipt"]["entry_hash"]
    assert entry["outcome"] == roll["outcome"]
    assert by_name["verifyExport", "export"].response["ok"] is True
    assert by_name["verifyTable", "default"].response["ok"] is True


def test_the_served_spec_keeps_each_operations_examples_in_order(client: httpx.Client) -> None:
    """The table page starts an operation's form from its first request example: the
    served document keeps examples.json's order (the committed one sorts its keys)."""
    served = client.get("/schema/openapi.json").json()
    order: dict[str, list[str]] = {}
    for example in load_examples():
        order.setdefault(example.operation, []).append(example.name)
    checked = 0
    for methods in served["paths"].values():
        for operation in methods.values():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            names = list((content or {}).get("examples", {}))
            if names and operation["operationId"] in order:
                assert names == order[operation["operationId"]], operation["operationId"]
                checked += 1
    assert checked >= 10
