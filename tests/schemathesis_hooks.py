"""Schemathesis hooks for fairroll (loaded with SCHEMATHESIS_HOOKS=schemathesis_hooks).

- ``application/x-ndjson``: POST /v1/verify takes an export as text.
- ``schema_valid_data_is_refused_only_by_the_rules`` replaces positive_data_acceptance:
  some rules cross fields (the supplied dice must number what the contestants roll) and
  JSON Schema cannot say so. Schema-valid data may be refused, but only as a rule
  violation, never as a schema breach; a reused ``Idempotency-Key`` is a 409 by design,
  and a table created with a write key refuses rolls without it (401/403).
"""

from __future__ import annotations

import json

import msgspec
import schemathesis
from schemathesis.checks import CheckContext
from schemathesis.core.transport import Response

from fairroll.audit import Entry

RULE_PROBLEMS = (
    "urn:fairroll:problem:rule-violation",
    "urn:fairroll:problem:invalid-dice",
    "urn:fairroll:problem:not-a-formula",
)


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx: object, value: object) -> bytes:
    return value.encode() if isinstance(value, str) else json.dumps(value).encode()


@schemathesis.hook("filter_body").apply_to(method="POST", path="/v1/verify")
def text_bodies_only(ctx: object, body: object) -> bool:
    """An NDJSON body is text on the wire: a generated non-string "of the wrong type"
    would be serialised to text, which is a valid (if unverifiable) export."""
    return isinstance(body, str)


@schemathesis.deserializer("application/x-ndjson")
def entries(ctx: object, response: Response) -> str:
    """An export: every line must decode as an audit entry, or the response is wrong."""
    # Split on b"\n" only: str.splitlines() would also split inside entries on U+2028 & co.
    for line in response.content.split(b"\n")[:-1]:
        msgspec.json.decode(line, type=Entry, strict=True)
    if not response.content.endswith(b"\n") and response.content:
        raise ValueError("an export ends every line, the last one included, with a newline")
    return response.content.decode()


@schemathesis.check
def schema_valid_data_is_refused_only_by_the_rules(
    ctx: CheckContext, response: Response, case: schemathesis.Case
) -> bool | None:
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    headers = {k.lower() for k in (case.headers or {})}
    if response.status_code == 422:
        problem = response.json()
        assert problem["type"] in RULE_PROBLEMS, f"schema-valid data refused: {problem}"
    elif response.status_code == 409 and "idempotency-key" in headers:
        return None  # the key was used with another request: the documented 409
    elif response.status_code == 409 and isinstance(case.body, dict) and "session" in case.body:
        return None  # the session was revealed, or is at another nonce: the documented 409
    elif response.status_code in (401, 403):
        return None  # a table with a write key (the stateful phase makes some): not data
    elif response.status_code >= 400 and response.status_code not in (404, 503):
        raise AssertionError(f"schema-valid data answered {response.status_code}")
    return None
