"""Request and response examples for the OpenAPI spec, taken from the seeds' worked examples.

``examples.json`` (next to this module) lists, per ``operationId``, named examples:
the request written by hand from a seed (quoted in ``source``) and the response a
live server gave to it (``scripts/refresh_examples.py`` fills those in, and
``tests/test_examples.py`` fails when the server's answer drifts from them). The spec
keeps their order, and an operation's first example is the one the table page's form
starts from.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import msgspec
from litestar import Litestar
from litestar.openapi.spec import (
    Example,
    Parameter,
)

from fairroll.spec.openapi import operations_by_id

__all__ = [
    "EXAMPLES_PATH",
    "SpecExample",
    "attach_examples",
    "load_examples",
]

EXAMPLES_PATH = Path(__file__).with_name("examples.json")


class SpecExample(msgspec.Struct, frozen=True, kw_only=True):
    operation: str
    name: str
    summary: str
    source: str
    request: Any = None
    params: dict[str, str | int] = {}
    ndjson: str | None = None
    response: Any = None


class WholeExample(Example):
    """An example whose value is written as it is: Litestar's document writer drops every
    ``null`` (it omits unset fields so), which would make a response example contradict
    its own schema (``seed: null`` is a field every roll response has)."""

    def to_schema(self) -> dict[str, Any]:
        schema = super().to_schema()
        schema["value"] = self.value
        return schema


@cache
def load_examples() -> tuple[SpecExample, ...]:
    return msgspec.json.decode(EXAMPLES_PATH.read_bytes(), type=tuple[SpecExample, ...])


def attach_examples(app: Litestar) -> None:
    """Put every example on its operation: request body, parameters and success response."""
    operations = operations_by_id(app.openapi_schema)
    for example in load_examples():
        _method, _path, operation = operations[example.operation]
        if example.request is not None and operation.request_body is not None:
            media = operation.request_body.content["application/json"]  # type: ignore[union-attr]
            media.examples = {
                **(media.examples or {}),
                example.name: _example(example, example.request),
            }
        if example.ndjson is not None and operation.request_body is not None:
            media = operation.request_body.content["application/x-ndjson"]  # type: ignore[union-attr]
            media.examples = {
                **(media.examples or {}),
                example.name: _example(example, example.ndjson),
            }
        for parameter in operation.parameters or ():
            if isinstance(parameter, Parameter) and parameter.name in example.params:
                given = example.params[parameter.name]
                parameter.examples = {
                    **(parameter.examples or {}),
                    example.name: WholeExample(summary=example.summary, value=given),
                }
        if example.response is not None:
            for status, response in (operation.responses or {}).items():
                content = getattr(response, "content", None)
                if status.startswith("2") and content:
                    media = next(iter(content.values()))
                    media.examples = {
                        **(media.examples or {}),
                        example.name: _example(example, example.response),
                    }


def _example(example: SpecExample, value: Any) -> Example:
    return WholeExample(summary=example.summary, description=example.source, value=value)
