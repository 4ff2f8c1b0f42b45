"""Finishing touches on the generated OpenAPI document."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar.handlers import HTTPRouteHandler

__all__ = ["declare_closed_objects"]


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
