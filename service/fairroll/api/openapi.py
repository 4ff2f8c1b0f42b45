"""Finishing touches on the generated OpenAPI document."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar.handlers import HTTPRouteHandler

__all__ = ["declare_closed_objects", "declare_integer_bounds"]


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
