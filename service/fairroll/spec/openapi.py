"""Finishing touches on the generated OpenAPI document.

Two passes: ``declare_*`` fix Litestar's objects (bounds, closed objects, headers,
links, required response fields); ``publish`` then has ``spec.document`` rewrite the
JSON document into the forms SDK generators read best (see docs/openapi.md), and
serves that one (``FinishedDocument``).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar, Request
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import (
    Link,
    OpenAPI,
    OpenAPIMediaType,
    OpenAPIResponse,
    Operation,
    Parameter,
    Reference,
    Schema,
    SecurityScheme,
)
from litestar.openapi.spec.enums import OpenAPIType

from fairroll.spec.document import finish_document

__all__ = [
    "declare_closed_objects",
    "declare_head_limits",
    "declare_integer_bounds",
    "declare_links",
    "declare_ndjson",
    "declare_response_fields",
    "declare_roll_headers",
    "operations_by_id",
    "publish",
]


def declare_closed_objects(app: Litestar) -> None:
    """Mark request objects that reject unknown fields ``additionalProperties: false``.

    msgspec structs with ``forbid_unknown_fields`` answer 422 to an unknown field;
    Litestar does not render that, so clients (and schemathesis) would think
    extra fields are welcome.
    """
    closed = {cls.__name__ for cls in _request_structs(app) if _forbids_unknown(cls)}
    components = app.openapi_schema.components.schemas or {}
    for name, schema in components.items():
        if name in closed:
            schema.additional_properties = False


def declare_integer_bounds(app: Litestar) -> None:
    """Restore integer bounds Litestar drops on optional fields when a bound is 0.

    (Litestar copies ``ge``/``le`` from a field's metadata only when the value is truthy,
    so ``Annotated[int, Meta(ge=0)] | None`` reached the spec without its minimum.)
    """
    components = app.openapi_schema.components.schemas or {}
    for cls in _request_structs(app):
        schema = components.get(cls.__name__)
        properties = getattr(schema, "properties", None) or {}
        for field in msgspec.inspect.type_info(cls).fields:  # type: ignore[attr-defined]
            target = properties.get(field.encode_name)
            bounds = _int_bounds(field.type)
            if target is None or bounds is None or not hasattr(target, "minimum"):
                continue
            low, high = bounds
            if low is not None and target.minimum is None:
                target.minimum = low
            if high is not None and target.maximum is None:
                target.maximum = high


def _int_bounds(info: msgspec.inspect.Type) -> tuple[int | None, int | None] | None:
    if isinstance(info, msgspec.inspect.IntType):
        return info.ge, info.le
    if isinstance(info, msgspec.inspect.Metadata):  # a described field: its type inside
        return _int_bounds(info.type)
    if isinstance(info, msgspec.inspect.UnionType):
        found = [b for t in info.types if (b := _int_bounds(t)) is not None]
        return found[0] if len(found) == 1 else None
    return None


def _request_structs(app: Litestar) -> set[type[msgspec.Struct]]:
    bodies: list[Any] = []
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if isinstance(handler, HTTPRouteHandler):
                data = handler.parsed_fn_signature.parameters.get("data")
                if data is not None:
                    bodies.append(data.annotation)
    found: set[type[msgspec.Struct]] = set()
    for info in msgspec.inspect.multi_type_info(bodies):
        _collect(info, found)
    return found


def _collect(info: msgspec.inspect.Type, found: set[type[msgspec.Struct]]) -> None:
    if isinstance(info, msgspec.inspect.StructType):
        if info.cls in found:
            return
        found.add(info.cls)
        for field in info.fields:
            _collect(field.type, found)
    elif isinstance(info, msgspec.inspect.Metadata):
        _collect(info.type, found)
    elif isinstance(info, msgspec.inspect.UnionType):
        for member in info.types:
            _collect(member, found)
    elif isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)):
        _collect(info.item_type, found)
    elif isinstance(info, msgspec.inspect.DictType):
        _collect(info.value_type, found)


def _forbids_unknown(cls: type[msgspec.Struct]) -> bool:
    return bool(cls.__struct_config__.forbid_unknown_fields)


#: A seed session's credential (``play.sessions``): a roll in a session and a call on a
#: session's path show it; the server refuses them 403 without it by default.
_SESSION_TOKEN = Parameter(
    name="Fairroll-Session-Token",
    param_in="header",
    required=False,
    description=(
        "The `token` the session's opening answered (POST /v1/tables/{table}/seeds): a "
        "roll in a seed session (its body names `session`) and its reveal show it; without "
        "it, or with another, they are refused 403 (unless the operator set "
        "FAIRROLL_SESSION_TOKENS=optional). Not needed for a roll outside a session."
    ),
    # Any value is read (a roll outside a session ignores it); one longer than the bound
    # of every header fairroll reads (``api.request_headers.HEADER_BYTES``) is refused.
    schema=Schema(type=OpenAPIType.STRING, max_length=4096),
)


def declare_roll_headers(app: Litestar) -> None:
    """Declare the headers every roll reads: ``Idempotency-Key``, the table's write key and
    a seed session's token (on a session's own POSTs too)."""
    spec = app.openapi_schema
    components = spec.components
    components.security_schemes = {
        **(components.security_schemes or {}),
        "tableWriteKey": SecurityScheme(
            type="http",
            scheme="bearer",
            description="A table's write key, from POST /v1/tables (shown once).",
        ),
    }
    # Every operation is open to anonymous callers unless it says otherwise (the rolls).
    spec.security = [{}]
    for method, path, operation in operations_by_id(spec).values():
        if "401" in (operation.responses or {}):
            # Anonymous on an open table (``default``), the write key on a table that has one.
            operation.security = [{}, {"tableWriteKey": []}]
        # A cosignature shows a session's token in its body (``session``), not the header.
        cosigns = path.endswith("/cosignatures")
        in_session = method == "POST" and "{seed_id}" in path
        if (_is_roll(operation) and not cosigns) or in_session:
            operation.parameters = [*(operation.parameters or ()), _SESSION_TOKEN]
        if not _is_roll(operation):
            continue
        operation.parameters = [
            *(operation.parameters or ()),
            Parameter(
                name="Idempotency-Key",
                param_in="header",
                required=False,
                description=(
                    "Makes a retry safe: the same key and request on the same table within "
                    "24 hours return the original roll; the same key with another request "
                    "is 409."
                ),
                schema=Schema(
                    type=OpenAPIType.STRING,
                    min_length=1,
                    max_length=128,
                    pattern="^[!-~]+$",
                ),
            ),
        ]


#: Answered to any request before routing (``api.limits``): every operation can get them.
HEAD_LIMITS = {
    "414": "The request target (path and query) is longer than the server reads.",
    "431": "The request's headers are too many or too large.",
}


def declare_head_limits(app: Litestar) -> None:
    """Declare on every operation the problems a request's head can earn before routing."""
    problem = Reference(ref="#/components/schemas/Problem")
    for operation in _operations(app.openapi_schema).values():
        responses = operation.responses if operation.responses is not None else {}
        for status, description in HEAD_LIMITS.items():
            responses.setdefault(
                status,
                OpenAPIResponse(
                    description=description,
                    content={"application/problem+json": OpenAPIMediaType(schema=problem)},
                ),
            )
        operation.responses = responses


def _is_roll(operation: Operation) -> bool:
    responses = operation.responses or {}
    return "401" in responses and operation.request_body is not None and "409" in responses


def declare_links(app: Litestar) -> None:
    """Link what a POST creates to the GETs that read it back (clients and schemathesis's
    stateful phase follow them): a roll's receipt to its audit entry and table, a new
    table to its entries, a seed session to its status and reveal."""
    operations = _operations(app.openapi_schema)
    table = "$response.body#/receipt/table"
    for operation in operations.values():
        if _is_roll(operation):
            _link(
                operation,
                GetAuditEntry=(
                    "getTableEntry",
                    {"table": table, "seq": "$response.body#/receipt/seq"},
                ),
                ListTableEntries=("listTableEntries", {"table": table}),
                VerifyTable=("verifyTable", {"table": table}),
            )
    _link(
        operations["createTable"],
        ListTableEntries=("listTableEntries", {"table": "$response.body#/table"}),
        GetTableCheckpoint=("getTableCheckpoint", {"table": "$response.body#/table"}),
    )
    session = {"table": "$response.body#/table", "seed_id": "$response.body#/seed_id"}
    _link(
        operations["createSeedSession"],
        GetSeedSession=("getSeedSession", session),
        # The reveal shows the token the opening answered (a session is its player's).
        RevealSeedSession=(
            "revealSeedSession",
            {**session, "header.Fairroll-Session-Token": "$response.body#/token"},
        ),
    )


def _link(operation: Operation, **links: tuple[str, dict[str, str]]) -> None:
    for status, response in (operation.responses or {}).items():
        if status.startswith("2") and hasattr(response, "links"):
            response.links = {
                **(response.links or {}),
                **{
                    name: Link(operation_id=target, parameters=dict(parameters))
                    for name, (target, parameters) in links.items()
                },
            }


def operations_by_id(spec: OpenAPI) -> dict[str, tuple[str, str, Operation]]:
    """``operationId`` -> (method, path, operation) of every operation in the spec."""
    found: dict[str, tuple[str, str, Operation]] = {}
    for path, item in (spec.paths or {}).items():
        for method in ("get", "post", "put", "patch", "delete"):
            operation = getattr(item, method, None)
            if operation is not None and operation.operation_id:
                found[operation.operation_id] = (method.upper(), path, operation)
    return found


def _operations(spec: OpenAPI) -> dict[str, Operation]:
    return {op_id: operation for op_id, (_, _, operation) in operations_by_id(spec).items()}


def declare_ndjson(app: Litestar) -> None:
    """An export is NDJSON text: one audit entry (``Entry``) as JSON per line."""
    operations = _operations(app.openapi_schema)
    text = Schema(
        type=OpenAPIType.STRING,
        description="NDJSON: one audit entry (schema `Entry`) as JSON per line, in seq order.",
    )
    for response in (operations["exportTable"].responses or {}).values():
        content = getattr(response, "content", None) or {}
        if "application/x-ndjson" in content:
            content["application/x-ndjson"].schema = text
    body = operations["verifyExport"].request_body
    if body is not None and not isinstance(body, Reference):
        body.content["application/x-ndjson"].schema = text


def declare_response_fields(app: Litestar) -> None:
    """Mark every field of a response-only struct ``required``: the server always writes
    it (a default only matters to a request), so SDKs get non-optional fields. A struct
    also read in requests keeps its optional fields (they are optional there)."""
    requests = {cls.__name__ for cls in _request_structs(app)}
    components = app.openapi_schema.components.schemas or {}
    returns: list[Any] = []
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if isinstance(handler, HTTPRouteHandler):
                kind = handler.parsed_fn_signature.return_type.annotation
                if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
                    returns.append(kind)
    found: set[type[msgspec.Struct]] = set()
    for info in msgspec.inspect.multi_type_info(returns):
        _collect(info, found)
    for cls in found:
        schema = components.get(cls.__name__)
        if cls.__name__ in requests or not isinstance(schema, Schema) or not schema.properties:
            continue
        fields = msgspec.inspect.type_info(cls).fields  # type: ignore[attr-defined]
        # A field left UNSET is left out of the answer: only those stay optional.
        schema.required = sorted(
            f.encode_name
            for f in fields
            if _always_written(f) and f.encode_name in schema.properties
        )


def _always_written(field: Any) -> bool:
    """A field the server always writes: required, or with a default other than UNSET
    (which ``msgspec.inspect`` reports as no default on a field that is not required)."""
    if field.required:
        return True
    if field.default_factory is not msgspec.NODEFAULT:
        return True
    return field.default not in (msgspec.NODEFAULT, msgspec.UNSET)


class FinishedDocument(JsonRenderPlugin):
    """``/schema/openapi.json``: the document ``publish`` finished, where Litestar's own
    JSON plugin would serve the schema it derived (before ``publish``, that one)."""

    def __init__(self) -> None:
        super().__init__()
        self.document: dict[str, Any] | None = None

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return self.render_json(request, self.document or openapi_schema)


def finished_document(app: Litestar) -> dict[str, Any]:
    """The document ``/schema/openapi.json`` serves (what ``publish`` finished)."""
    for plugin in app.openapi_config.render_plugins if app.openapi_config else ():
        if isinstance(plugin, FinishedDocument) and plugin.document is not None:
            return plugin.document
    raise LookupError("the app's OpenAPI document was not published (spec.openapi.publish)")


def publish(app: Litestar) -> dict[str, Any]:
    """Finish the document, which ``/schema/openapi.json`` then serves (``FinishedDocument``,
    one of the app's render plugins)."""
    pairs = {
        cls.__name__: pair
        for cls in _request_structs(app)
        if isinstance(pair := getattr(cls, "exactly_one", None), tuple)
    }
    document = finish_document(app.openapi_schema.to_schema(), pairs)
    for cls in _request_structs(app):
        _extensions_of(document["components"]["schemas"].get(cls.__name__), cls)
    plugins = app.openapi_config.render_plugins if app.openapi_config else ()
    for plugin in plugins:
        if isinstance(plugin, FinishedDocument):
            plugin.document = document
            return document
    raise LookupError("the app serves no FinishedDocument (spec.openapi) at /openapi.json")


def _extensions_of(schema: dict[str, Any] | None, cls: type[msgspec.Struct]) -> None:
    """Copy a field's ``x-`` extensions (``msgspec.Meta(extra={"x-...": ...})``, which
    Litestar does not render) onto its property: the limits a string's grammar keeps."""
    info = msgspec.inspect.type_info(cls)
    if schema is None or not isinstance(info, msgspec.inspect.StructType):
        return
    for field in info.fields:
        kind = field.type
        while isinstance(kind, msgspec.inspect.Metadata):
            said = {k: v for k, v in (kind.extra or {}).items() if k.startswith("x-")}
            schema.get("properties", {}).get(field.encode_name, {}).update(said)
            kind = kind.type
