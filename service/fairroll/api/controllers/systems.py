"""The routes of every declared system, built from its declaration.

For each :class:`~fairroll.mechanics.Mechanic` this makes its request type (the
input struct plus the envelope's ``table``, ``seed``, ``dice``, ``session`` and
``sealed``),
its response type (the envelope, the outcome and its words), its roll handler
and its odds handler; for each calculation, its handler; and ``GET /v1/systems``,
which lists them all. Nothing here is particular to one system.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from litestar import Controller, Request, Router, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import Tag
from msgspec import UNSET, UnsetType

from fairroll.api.dependencies import roller_of
from fairroll.api.direct import DIRECT
from fairroll.api.problems import CALC_ERRORS, ROLL_ERRORS
from fairroll.mechanics import Calculation, Mechanic, System, Words, ordered
from fairroll.odds import Odds
from fairroll.play.envelope import Blind, RollResponse, SealedRef, SessionRef, TableName
from fairroll.randomness import Die, Seed

__all__ = [
    "MechanicTypes",
    "SystemList",
    "SystemsController",
    "mechanic_types",
    "system_routers",
    "system_tags",
]


class MechanicTypes(msgspec.Struct, frozen=True):
    """The API types a mechanic's declaration gives."""

    request: type[msgspec.Struct]
    response: type[msgspec.Struct]


_TYPES: dict[str, MechanicTypes] = {}
_ENCODE = msgspec.json.Encoder().encode


def mechanic_types(mechanic: Mechanic[Any, Any]) -> MechanicTypes:
    """The request and response types of ``mechanic`` (made once per process)."""
    made = _TYPES.get(mechanic.name)
    if made is None:
        request = msgspec.defstruct(
            f"{mechanic.type_name}Request",
            [
                ("table", TableName, "default"),
                ("seed", Seed | UnsetType, UNSET),
                ("dice", mechanic.dice_type | UnsetType, UNSET),
                ("session", SessionRef | UnsetType, UNSET),
                ("sealed", SealedRef | UnsetType, UNSET),
            ],
            bases=(mechanic.input_type,),
            module=__name__,
            frozen=True,
            kw_only=True,
            forbid_unknown_fields=True,
        )
        request.__doc__ = mechanic.input_type.__doc__
        opening = msgspec.defstruct(
            f"{mechanic.type_name}Opening",
            [
                ("blind", Blind),
                ("mechanic", str),
                ("request", mechanic.input_type),
                ("dice", tuple[Die, ...]),
                ("outcome", mechanic.outcome_type),
            ],
            module=__name__,
            frozen=True,
            kw_only=True,
        )
        opening.__doc__ = (
            f"A sealed {mechanic.name} roll's opening: its entry's commitment is the SHA-256 "
            "of it (docs/audit.md, 'Sealed rolls'). Keep it to reveal the roll."
        )
        response = msgspec.defstruct(
            f"{mechanic.type_name}Response",
            [
                ("outcome", mechanic.outcome_type),
                ("words", Words),
                ("opening", opening | UnsetType, UNSET),
            ],
            bases=(RollResponse,),
            module=__name__,
            frozen=True,
            kw_only=True,
        )
        response.__doc__ = f"A {mechanic.name} roll: the envelope, its outcome and its words."
        made = _TYPES[mechanic.name] = MechanicTypes(request, response)
    return made


def system_routers(systems: Iterable[System]) -> list[Router]:
    """One router per system, at ``/v1/<slug>``, tagged with its slug."""
    return [
        Router(
            path=f"/v1/{system.slug}",
            route_handlers=[
                *(h for m in system.mechanics for h in _mechanic_handlers(m)),
                *(_calculation_handler(c) for c in system.calculations),
            ],
            tags=[system.slug],
        )
        for system in systems
    ]


def system_tags(systems: Iterable[System]) -> list[Tag]:
    return [Tag(name=s.slug, description=s.description) for s in systems]


def _mechanic_handlers(mechanic: Mechanic[Any, Any]) -> list[HTTPRouteHandler]:
    types = mechanic_types(mechanic)
    response_type = types.response
    read = mechanic.read

    async def roll(data: Any, request: Request[Any, Any, Any]) -> Any:
        # The hot path of every roll: the body arrives decoded (``strict_body``), the
        # roller is made here rather than by a dependency, and the answer is encoded
        # once, here: Litestar sends bytes as they are (its annotation, the response
        # type, is what the spec says the bytes hold).
        rolled = await roller_of(request).roll(mechanic, data)
        words = read(data, rolled.outcome)  # the request is an instance of the input type
        return _ENCODE(response_type(**rolled.envelope(), outcome=rolled.outcome, words=words))

    # The envelope's "one of seed, dice, session" and the mechanic's own constraints are
    # said on the request component (``spec.document.finish_document``).
    roll.__annotations__ = {
        "data": types.request,
        "request": Request,
        "return": response_type,
    }
    roll.__name__ = roll.__qualname__ = f"roll_{mechanic.type_name}"

    async def odds(data: Any) -> Odds:
        return mechanic.odds_of(data)

    odds.__annotations__ = {"data": mechanic.input_type, "return": Odds}
    odds.__name__ = odds.__qualname__ = f"odds_{mechanic.type_name}"
    return [
        post(
            mechanic.path,
            operation_id=mechanic.operation_id,
            summary=mechanic.summary,
            description=mechanic.description or None,
            status_code=200,
            responses=ROLL_ERRORS,
            opt={DIRECT: True},  # answered by ``api.direct``, the same handler below Litestar's
        )(roll),
        post(
            f"{mechanic.path}/odds",
            operation_id=mechanic.odds_operation_id,
            summary=mechanic.odds_summary,
            description=mechanic.odds_description or None,
            status_code=200,
            responses=CALC_ERRORS,
        )(odds),
    ]


def _calculation_handler(calculation: Calculation) -> HTTPRouteHandler:
    compute = calculation.compute
    kind = calculation.input_type
    handler: Callable[..., Any]
    if kind is None:

        async def answer_get() -> Any:
            return compute()

        handler = answer_get
        handler.__annotations__ = {"return": calculation.output_type}
    else:

        async def answer(data: Any) -> Any:
            return compute(data)

        handler = answer
        handler.__annotations__ = {"data": kind, "return": calculation.output_type}
    handler.__name__ = handler.__qualname__ = calculation.operation_id
    decorator = get if calculation.method == "GET" else post
    options: dict[str, Any] = {
        "operation_id": calculation.operation_id,
        "summary": calculation.summary,
        "description": calculation.description or None,
    }
    if decorator is post:
        options.update(status_code=200, responses=CALC_ERRORS)
    return decorator(calculation.path, **options)(handler)


# --- GET /v1/systems --------------------------------------------------------------------


class Endpoint(msgspec.Struct, frozen=True, kw_only=True):
    """An endpoint: its method, path and operation id (the spec's, an SDK's method name)."""

    method: str
    path: str
    operation_id: str
    summary: str


class DiceField(msgspec.Struct, frozen=True, kw_only=True):
    """Where supplied dice go in the request (``dice.<path>``) and what they are."""

    path: str
    sides: int
    max_dice: int


class MechanicInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A mechanic: its name (an entry's ``mechanic``), what it does, roll and odds."""

    name: str
    summary: str
    description: str
    roll: Endpoint
    odds: Endpoint
    request_schema: str
    dice: list[DiceField]


class SystemInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A rule system: its slug (in paths and mechanic names), the rules text it follows."""

    slug: str
    title: str
    description: str
    source: str
    mechanics: list[MechanicInfo]
    calculations: list[Endpoint]


class SystemList(msgspec.Struct, frozen=True, kw_only=True):
    """Every rule system this server resolves, and each of its mechanics."""

    systems: list[SystemInfo]


def _dice_of(mechanic: Mechanic[Any, Any]) -> list[DiceField]:
    info = msgspec.inspect.type_info(mechanic.dice_type)
    fields = info.fields if isinstance(info, msgspec.inspect.StructType) else ()
    return [d for f in fields for d in _nested(f.type, f.encode_name)]


def _nested(kind: msgspec.inspect.Type, path: str) -> list[DiceField]:
    while isinstance(kind, msgspec.inspect.Metadata):
        kind = kind.type
    if isinstance(kind, msgspec.inspect.StructType):
        return [d for f in kind.fields for d in _nested(f.type, f"{path}.{f.encode_name}")]
    if isinstance(kind, msgspec.inspect.ListType):
        item = kind.item_type
        while isinstance(item, msgspec.inspect.Metadata):
            item = item.type
        if isinstance(item, msgspec.inspect.IntType):
            # A die shows ge..le (a Fate die -1..1: three sides).
            sides = (item.le or 0) - (item.ge if item.ge is not None else 1) + 1
            return [DiceField(path=path, sides=sides, max_dice=kind.max_length or 0)]
        return _nested(item, f"{path}[]")
    return []


def system_list(systems: Iterable[System]) -> SystemList:
    return SystemList(
        systems=[
            SystemInfo(
                slug=s.slug,
                title=s.title,
                description=s.description,
                source=s.source,
                mechanics=[_mechanic_info(s, m) for m in s.mechanics],
                calculations=[
                    Endpoint(
                        method=c.method,
                        path=f"/v1/{s.slug}{c.path}",
                        operation_id=c.operation_id,
                        summary=c.summary,
                    )
                    for c in s.calculations
                ],
            )
            for s in systems
        ]
    )


def _mechanic_info(system: System, mechanic: Mechanic[Any, Any]) -> MechanicInfo:
    path = f"/v1/{system.slug}{mechanic.path}"
    return MechanicInfo(
        name=mechanic.name,
        summary=mechanic.summary,
        description=mechanic.description,
        roll=Endpoint(
            method="POST", path=path, operation_id=mechanic.operation_id, summary=mechanic.summary
        ),
        odds=Endpoint(
            method="POST",
            path=f"{path}/odds",
            operation_id=mechanic.odds_operation_id,
            summary=mechanic.odds_summary,
        ),
        request_schema=f"#/components/schemas/{mechanic.type_name}Request",
        dice=_dice_of(mechanic),
    )


class SystemsController(Controller):
    path = "/v1/systems"
    tags = ("systems",)

    @get(operation_id="listSystems", summary="Every rule system and mechanic this server rolls")
    async def list_systems(self) -> SystemList:
        return _listed(ordered())


_LISTED: dict[tuple[int, ...], SystemList] = {}


def _listed(systems: list[System]) -> SystemList:
    """The listing of these systems, made once: it inspects every mechanic's types
    (too slow to redo on every request), and the systems a process rolls are fixed once
    it has started."""
    key = tuple(id(system) for system in systems)
    listed = _LISTED.get(key)
    if listed is None:
        listed = _LISTED[key] = system_list(systems)
    return listed
