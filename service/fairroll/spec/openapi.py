"""Finishing touches on the generated OpenAPI document.

Two passes: ``declare_*`` fix Litestar's objects (bounds, closed objects, headers,
links, required response fields); :func:`finish_document` then rewrites the JSON
document into the forms SDK generators read best (see docs/openapi.md): nullable
simple types as ``type: [X, "null"]``, tuples with ``items``, request constraints on
the request's own component as ``if``/``then``/``else`` and ``dependentSchemas``
(which generators leave out of the model instead of making junk models of them), and
``Entry`` as a union of one typed entry per mechanic, discriminated on ``mechanic``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
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

from fairroll.chain import MAX_LENGTH
from fairroll.mechanics import MECHANICS
from fairroll.mechanics.declare import Mechanic

__all__ = [
    "declare_closed_objects",
    "declare_head_limits",
    "declare_integer_bounds",
    "declare_links",
    "declare_ndjson",
    "declare_response_fields",
    "declare_roll_headers",
    "finish_document",
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


def declare_roll_headers(app: Litestar) -> None:
    """Declare the headers every roll reads: ``Idempotency-Key`` and the table's write key."""
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
    for operation in _operations(spec).values():
        if "401" in (operation.responses or {}):
            # Anonymous on an open table (``default``), the write key on a table that has one.
            operation.security = [{}, {"tableWriteKey": []}]
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
        RevealSeedSession=("revealSeedSession", session),
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


#: The envelope's rule: at most one of ``seed``, ``dice`` and ``session``.
_ENVELOPE_ONE_OF = ("seed", "dice", "session")


def finish_document(
    document: dict[str, Any], exactly_one: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    """Rewrite the generated document for SDK generators (the module docstring says how);
    ``exactly_one`` names the components that take exactly one of two fields (the rules
    say so on their structs, as ``exactly_one``)."""
    schemas: dict[str, Any] = document["components"]["schemas"]
    _walk(document, _single_one_of)
    _walk(document, _typed_headers)
    _hoist_enums(schemas)
    _walk(document, _nullable_simple_types)
    _walk(document, _tuple_items)
    for name, pair in exactly_one.items():
        if name in schemas:
            _constraints_of(schemas[name], pair)
    for mechanic in MECHANICS.values():
        _roll_body(document, mechanic)
    _entry_union(document)
    _titled(schemas)
    return document


def _constraints_of(schema: dict[str, Any], pair: tuple[str, str]) -> None:
    """Say "exactly one of a, b" as ``if a then not b else b`` (not Litestar's ``not`` of
    required lists, which generators turn into junk models)."""
    first, second = pair
    schema.pop("not", None)
    schema["if"] = {"required": [first]}
    schema["then"] = {"not": {"required": [second]}}
    schema["else"] = {"required": [second]}


def _roll_body(document: dict[str, Any], mechanic: Mechanic[Any, Any]) -> None:
    """A roll's body is its request component itself, which says the envelope's rule (at
    most one of seed, dice, session) and the mechanic's own dependent fields."""
    schemas = document["components"]["schemas"]
    name = f"{mechanic.type_name}Request"
    component = schemas.get(name)
    if component is None:
        return
    dependent: dict[str, Any] = {}
    for i, field in enumerate(_ENVELOPE_ONE_OF):
        others = _ENVELOPE_ONE_OF[i + 1 :]
        if len(others) > 1:
            dependent[field] = {"not": {"anyOf": [{"required": [o]} for o in others]}}
        elif others:
            dependent[field] = {"not": {"required": list(others)}}
    component["dependentSchemas"] = dependent
    if mechanic.dependent_required:
        component["dependentRequired"] = {
            k: list(v) for k, v in mechanic.dependent_required.items()
        }


def _entry_union(document: dict[str, Any]) -> None:
    """``Entry`` as one typed entry per mechanic (its request and outcome types) and one
    for statements, discriminated on ``mechanic``."""
    schemas = document["components"]["schemas"]
    generic = schemas.get("Entry")
    if generic is None:
        return
    paths = document["paths"]
    mapping: dict[str, str] = {}
    variants: list[dict[str, str]] = []
    for mechanic in sorted(MECHANICS.values(), key=lambda m: m.name):
        roll = _operation(paths, mechanic.operation_id)
        odds = _operation(paths, mechanic.odds_operation_id)
        if roll is None or odds is None:
            continue
        request_ref = odds["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        response_ref = roll["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        response = schemas[response_ref.rsplit("/", 1)[1]]
        name = f"{mechanic.type_name}Entry"
        schemas[name] = _variant(
            generic,
            f"An audit entry of a {mechanic.name} roll.",
            [mechanic.name],
            {"$ref": request_ref},
            response["properties"]["outcome"],
        )
        ref = f"#/components/schemas/{name}"
        mapping[mechanic.name] = ref
        variants.append({"$ref": ref})
    for kind, (said, came) in _statements(schemas).items():
        stem = _pascal(kind.replace(".", "_"))
        name = f"{stem}Entry"
        # Named, so generators name them too (not Request1, Request2 ...).
        request, outcome = said, came
        if said.get("type") == "object":
            schemas[f"{stem}Request"] = said
            request = {"$ref": f"#/components/schemas/{stem}Request"}
        if came.get("type") == "object":
            schemas[f"{stem}Outcome"] = came
            outcome = {"$ref": f"#/components/schemas/{stem}Outcome"}
        schemas[name] = _variant(
            generic, f"A signed statement of the log: {kind}.", [kind], request, outcome
        )
        ref = f"#/components/schemas/{name}"
        mapping[kind] = ref
        variants.append({"$ref": ref})
    schemas["Entry"] = {
        "title": "Entry",
        "description": generic.get("description", "An audit entry."),
        "oneOf": variants,
        "discriminator": {"propertyName": "mechanic", "mapping": mapping},
    }


def _statements(schemas: dict[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The request and outcome of each statement, as docs/audit.md states them."""

    def closed(description: str, **fields: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "description": description,
            "properties": fields,
            "required": sorted(fields),
            "additionalProperties": False,
        }

    text = {"type": "string"}
    count = {"type": "integer", "minimum": 0}
    policy = (
        {"$ref": "#/components/schemas/TablePolicy"}
        if "TablePolicy" in schemas
        else closed(
            "The table's policy.",
            chosen_seeds={"type": "boolean"},
            supplied_dice={"type": "boolean"},
            drawn_seeds={"type": "boolean"},
        )
    )
    null = {"type": "null"}
    link = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    length = {"type": "integer", "minimum": 1, "maximum": MAX_LENGTH}
    chain_commit = closed(
        "A hash-chain session for a player (player is optional).",
        seed_id=text,
        kind={"type": "string", "const": "chain"},
        commitment=link,
        length=length,
        first_nonce={"type": "integer", "const": 1},
        player=text,
    )
    chain_commit["required"].remove("player")
    return {
        "session.commit": (
            {
                "description": "A seed session opens: a hash chain committed to its anchor, "
                "or a commit-reveal session committed to SHA-256 of its server seed.",
                "oneOf": [
                    _named(schemas, "ChainCommitment", chain_commit),
                    _named(
                        schemas,
                        "SeedCommitment",
                        closed("A commit-reveal session.", seed_id=text, commitment=text),
                    ),
                ],
            },
            null,
        ),
        "session.renew": (
            closed(
                "A hash-chain session's next chain, committed once the one before is used up.",
                seed_id=text,
                kind={"type": "string", "const": "chain"},
                commitment=link,
                length=length,
                first_nonce={"type": "integer", "minimum": 1},
                previous=link,
            ),
            null,
        ),
        "session.reveal": (
            closed(
                "A seed session's server seed, revealed once its rolls are done.",
                seed_id=text,
                commitment=text,
                server_seed=text,
                rolls=count,
                revealed_by=text,
            ),
            null,
        ),
        "table.policy": (policy, null),
        "key.retire": (closed("A key that signs no entry after this one.", key_id=text), null),
        "audit.epoch": (
            closed(
                "Seqs lost_after + 1 .. resume_after were lost (an operator's word).",
                lost_after=count,
                resume_after=count,
                reason=text,
            ),
            closed("How many seqs were lost.", lost=count),
        ),
    }


def _named(schemas: dict[str, Any], name: str, schema: dict[str, Any]) -> dict[str, str]:
    """``schema`` as the component ``name`` (so generators name its model), by reference."""
    schemas[name] = {"title": name, **schema}
    return {"$ref": f"#/components/schemas/{name}"}


def _variant(
    generic: dict[str, Any],
    description: str,
    mechanics: list[str],
    request: dict[str, Any],
    outcome: dict[str, Any],
) -> dict[str, Any]:
    variant = json.loads(json.dumps(generic))
    variant["description"] = description
    properties = variant["properties"]
    properties["mechanic"] = {"type": "string", "const": mechanics[0]}
    properties["request"] = request
    properties["outcome"] = outcome
    return dict(variant)


def _titled(schemas: dict[str, Any]) -> None:
    for name, schema in schemas.items():
        schema["title"] = name


def _operation(paths: dict[str, Any], operation_id: str) -> dict[str, Any] | None:
    for methods in paths.values():
        for operation in methods.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                return operation
    return None


def _walk(node: Any, change: Any) -> None:
    if isinstance(node, dict):
        change(node)
        for value in list(node.values()):
            _walk(value, change)
    elif isinstance(node, list):
        for value in node:
            _walk(value, change)


def _hoist_enums(schemas: dict[str, Any]) -> None:
    """Every enumeration of strings written inline becomes a named component (after its
    field, or its component and field where two differ), so a generator names its type
    once instead of numbering copies (``Allocation1``, ``..._type_2_type_1``)."""
    named: dict[str, list[str]] = {}
    by_values: dict[tuple[str, ...], str] = {}
    for owner, schema in list(schemas.items()):
        for field, prop, replace in _properties(schema):
            target = _enum_of(prop)
            if target is None:
                continue
            values = [v for v in target["enum"] if v is not None]
            name = by_values.get(tuple(values)) or _pascal(field)
            taken = schemas.get(name)
            if (taken is not None and name not in named) or named.get(name, values) != values:
                name = _pascal(owner) + _pascal(field)
            named[name] = values
            by_values[tuple(values)] = name
            schemas[name] = {"title": name, "type": "string", "enum": values}
            ref = {"$ref": f"#/components/schemas/{name}"}
            if target is prop:
                kept = {k: v for k, v in prop.items() if k in ("description", "default")}
                if None in prop["enum"]:  # Litestar's ``type: [null, string]`` for X | None
                    replace({"oneOf": [ref, {"type": "null"}], **kept})
                else:
                    replace({**ref, **kept})
            else:
                prop["oneOf"] = [ref if option is target else option for option in prop["oneOf"]]


def _properties(
    schema: dict[str, Any],
) -> list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], None]]]:
    """(field, its schema, how to replace it) for a schema's properties, and for the items
    of its array properties (an item named after its field)."""
    found: list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], None]]] = []
    properties = schema.get("properties") or {}
    for field, prop in properties.items():
        if not isinstance(prop, dict):
            continue
        found.append((field, prop, partial(properties.__setitem__, field)))
        items = prop.get("items")
        if isinstance(items, dict):
            found.append((field, items, partial(prop.__setitem__, "items")))
    return found


def _enum_of(prop: dict[str, Any]) -> dict[str, Any] | None:
    """The string enumeration a property is (or is or null), if it is one of two or more."""
    candidates = [prop]
    options = prop.get("oneOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        candidates = [o for o in options if o != {"type": "null"}]
    for candidate in candidates:
        values = candidate.get("enum")
        kind = candidate.get("type")
        strings = [v for v in values if v is not None] if isinstance(values, list) else []
        nullable = isinstance(kind, list) and sorted(kind) == ["null", "string"]
        if (
            (kind == "string" or nullable)
            and len(strings) > 1
            and all(isinstance(v, str) for v in strings)
        ):
            return candidate
    return None


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_"))


def _typed_headers(node: dict[str, Any]) -> None:
    """A response header Litestar wrote without a schema (``documentation_only``) is text."""
    headers = node.get("headers")
    if isinstance(headers, dict):
        for header in headers.values():
            if isinstance(header, dict) and "schema" not in header and "$ref" not in header:
                header["schema"] = {"type": "string"}
                header.pop("deprecated", None)


def _single_one_of(node: dict[str, Any]) -> None:
    """``oneOf: [X]`` (a field that may be left out, ``X | UNSET``) -> ``X`` itself."""
    options = node.get("oneOf")
    if isinstance(options, list) and len(options) == 1 and isinstance(options[0], dict):
        del node["oneOf"]
        for key, value in options[0].items():
            node.setdefault(key, value)


def _nullable_simple_types(node: dict[str, Any]) -> None:
    """``oneOf: [{type: X, ...}, {type: null}]`` -> ``type: [X, "null"], ...``."""
    options = node.get("oneOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return
    (real,) = [o for o in options if o != {"type": "null"}]
    if "$ref" in real or not isinstance(real.get("type"), str) or "oneOf" in real:
        return
    del node["oneOf"]
    for key, value in real.items():
        node.setdefault(key, value)
    node["type"] = [real["type"], "null"]
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]


def _tuple_items(node: dict[str, Any]) -> None:
    """A tuple (``prefixItems``) gets ``items`` (the type of its members) and its length."""
    prefix = node.get("prefixItems")
    if not isinstance(prefix, list) or "items" in node:
        return
    first = prefix[0] if prefix else {}
    node["items"] = first if all(p == first for p in prefix) else {}
    node.setdefault("minItems", len(prefix))
    node.setdefault("maxItems", len(prefix))
