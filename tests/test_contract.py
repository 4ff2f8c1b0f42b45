"""The committed OpenAPI spec is the served one and is fit for SDK generators.

(Schemathesis against a live server: test_schemathesis.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from openapi_spec_validator import validate

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "openapi" / "openapi.json"


def test_committed_spec_matches_the_served_spec(client: httpx.Client) -> None:
    served = client.get("/schema/openapi.json").json()
    committed = json.loads(SPEC.read_text())
    assert served == committed, "openapi/openapi.json is stale: run `fairroll openapi -o ...`"


def test_spec_is_valid_openapi() -> None:
    validate(json.loads(SPEC.read_text()))


def test_every_operation_has_an_id_summary_and_tag() -> None:
    spec = json.loads(SPEC.read_text())
    operations = [op for path in spec["paths"].values() for op in path.values()]
    assert operations
    for operation in operations:
        assert operation.get("operationId")
        assert operation.get("summary")
        assert operation.get("tags")
    assert "/metrics" not in spec["paths"]


def test_component_names_are_unique_class_names() -> None:
    # Litestar prefixes colliding names with their module; SDK generators would then name
    # types after modules, and closed (additionalProperties: false) objects go unmarked.
    components = json.loads(SPEC.read_text())["components"]["schemas"]
    assert [key for key, value in components.items() if key != value.get("title")] == []


def test_request_objects_refuse_unknown_fields() -> None:
    components = json.loads(SPEC.read_text())["components"]["schemas"]
    for name in ("TftContestRequest", "Contestant", "Contender", "Trait", "NewTrait", "TestDice"):
        assert components[name]["additionalProperties"] is False, name
