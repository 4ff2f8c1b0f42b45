"""The committed OpenAPI spec is the served one, and the server honours it (schemathesis)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import schemathesis
from hypothesis import HealthCheck, settings
from openapi_spec_validator import validate
from schemathesis.checks import CheckContext, positive_data_acceptance
from schemathesis.core.transport import Response

from conftest import LiveServer

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "openapi" / "openapi.json"

schema = schemathesis.openapi.from_path(SPEC)


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx: object, value: object) -> bytes:
    """POST /v1/verify takes an export as text: send generated text as it is."""
    return value.encode() if isinstance(value, str) else json.dumps(value).encode()


RULE_PROBLEMS = ("urn:fairroll:problem:rule-violation", "urn:fairroll:problem:invalid-dice")


@schemathesis.check
def schema_valid_data_is_refused_only_by_the_rules(
    ctx: CheckContext, response: Response, case: schemathesis.Case
) -> bool | None:
    """Replaces positive_data_acceptance: some rules cross fields (the supplied dice must
    number what the contestants roll) and JSON Schema cannot say so. Schema-valid data may
    be refused, but only as a rule violation, never as a schema breach."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code == 422:
        problem = response.json()
        assert problem["type"] in RULE_PROBLEMS, f"schema-valid data refused: {problem}"
    elif response.status_code >= 400 and response.status_code not in (404, 503):
        raise AssertionError(f"schema-valid data answered {response.status_code}")
    return None


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


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_server_honours_the_spec(case: schemathesis.Case, live_server: LiveServer) -> None:
    case.call_and_validate(
        base_url=live_server.url,
        excluded_checks=[positive_data_acceptance],
        additional_checks=[schema_valid_data_is_refused_only_by_the_rules],
    )
