"""The generated OpenAPI document rewritten into the forms SDK generators read best
(docs/openapi.md): nullable simple types as ``type: [X, "null"]``, tuples with
``items``, request constraints on the request's own component as ``if``/``then``/
``else`` and ``dependentSchemas`` (which generators leave out of the model instead of
making junk models of them), enums hoisted into named components, and ``Entry`` as a
union of one typed entry per mechanic, discriminated on ``mechanic``. What Litestar's
own objects need first is ``spec.openapi``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from fairroll.chain import MAX_LENGTH
from fairroll.mechanics import MECHANICS
from fairroll.mechanics.declare import Mechanic

__all__ = ["finish_document"]


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
    # A sealed roll rolls in a (hash-chain) seed session.
    required = {"sealed": ["session"]} if "sealed" in component.get("properties", {}) else {}
    required |= {k: list(v) for k, v in mechanic.dependent_required.items()}
    if required:
        component["dependentRequired"] = required


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
        said_as = (
            "A sealed roll: a committed roll whose dice and outcome its commitment hides."
            if kind == "sealed.roll"
            else f"A signed statement of the log: {kind}."
        )
        schemas[name] = _variant(generic, said_as, [kind], request, outcome)
        ref = f"#/components/schemas/{name}"
        mapping[kind] = ref
        variants.append({"$ref": ref})
    schemas["Entry"] = {
        "title": "Entry",
        "description": generic.get("description", "An audit entry."),
        "oneOf": variants,
        "discriminator": {"propertyName": "mechanic", "mapping": mapping},
    }


Statement = tuple[dict[str, Any], dict[str, Any]]


def _statements(schemas: dict[str, Any]) -> dict[str, Statement]:
    """The request and outcome of each statement, as docs/audit.md states them."""
    text = {"type": "string"}
    count = {"type": "integer", "minimum": 0}
    policy = (
        {"$ref": "#/components/schemas/TablePolicy"}
        if "TablePolicy" in schemas
        else _closed(
            "The table's policy.",
            chosen_seeds={"type": "boolean"},
            supplied_dice={"type": "boolean"},
            drawn_seeds={"type": "boolean"},
        )
    )
    null = {"type": "null"}
    return {
        **_session_statements(schemas),
        **_sealed_statements(schemas),
        "table.policy": (policy, null),
        "key.retire": (_closed("A key that signs no entry after this one.", key_id=text), null),
        "audit.epoch": (
            _closed(
                "Seqs lost_after + 1 .. resume_after were lost (an operator's word).",
                lost_after=count,
                resume_after=count,
                reason=text,
            ),
            _closed("How many seqs were lost.", lost=count),
        ),
    }


def _session_statements(schemas: dict[str, Any]) -> dict[str, Statement]:
    """The statements of a seed session: its commitment, a chain's renewal, its reveal."""
    text = {"type": "string"}
    null = {"type": "null"}
    link = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    length = {"type": "integer", "minimum": 1, "maximum": MAX_LENGTH}
    chain_commit = _closed(
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
                        _closed("A commit-reveal session.", seed_id=text, commitment=text),
                    ),
                ],
            },
            null,
        ),
        "session.renew": (
            _closed(
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
            _closed(
                "A seed session's server seed, revealed once its rolls are done.",
                seed_id=text,
                commitment=text,
                server_seed=text,
                rolls={"type": "integer", "minimum": 0},
                revealed_by=text,
            ),
            null,
        ),
    }


def _sealed_statements(schemas: dict[str, Any]) -> dict[str, Statement]:
    """A sealed roll's entry (a committed roll whose dice and outcome its commitment
    hides) and the reveal that opens it (docs/audit.md, "Sealed rolls")."""
    null = {"type": "null"}
    hex64 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    # The opening of each mechanic's roll, typed as its answer's (one per mechanic), by
    # its mechanic: a generator makes one model of each, none left untyped.
    openings = {
        m.name: f"#/components/schemas/{m.type_name}Opening"
        for m in sorted(MECHANICS.values(), key=lambda m: m.name)
        if f"{m.type_name}Opening" in schemas
    }
    opening: dict[str, Any] = (
        {
            "oneOf": [{"$ref": ref} for ref in openings.values()],
            "discriminator": {"propertyName": "mechanic", "mapping": openings},
        }
        if openings
        else {"type": "object"}
    )
    audience = (
        {"$ref": "#/components/schemas/Audience"}
        if "Audience" in schemas
        else {"type": "string", "enum": ["blind", "gm", "self"]}
    )
    return {
        "sealed.roll": (
            _closed(
                "A sealed roll: the mechanic it rolled, whom the roller's VTT shows it to, "
                "and the SHA-256 commitment to its opening (its dice and outcome are not "
                "in the entry).",
                mechanic={"type": "string"},
                audience=audience,
                commitment=hex64,
            ),
            null,
        ),
        "sealed.reveal": (
            _closed(
                "A sealed roll opened: the seq of its sealed.roll entry and its opening.",
                seq={"type": "integer", "minimum": 1},
                opening=opening,
            ),
            null,
        ),
    }


def _closed(description: str, **fields: dict[str, Any]) -> dict[str, Any]:
    """An object of exactly ``fields``, every one required."""
    return {
        "type": "object",
        "description": description,
        "properties": fields,
        "required": sorted(fields),
        "additionalProperties": False,
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
