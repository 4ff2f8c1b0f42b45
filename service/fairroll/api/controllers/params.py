"""The parameters the table resources share: a table's name, a seq, a size, a seed
session's id; and a body that may be left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar.openapi.spec import Operation, RequestBody, Schema
from litestar.params import Parameter

__all__ = [
    "LAST_SEQ",
    "After",
    "FromSeq",
    "Limit",
    "OptionalBody",
    "SeedId",
    "Seq",
    "TablePath",
    "ToSeq",
    "TreeSize",
]


Seq = Annotated[int, Parameter(ge=1, le=2**53, description="The entry's sequence number.")]
After = Annotated[
    int, Parameter(ge=0, le=2**53, description="Return entries with seq greater than this.")
]
FromSeq = Annotated[int, Parameter(ge=1, le=2**53, description="First seq to export.")]
LAST_SEQ = 2**53
ToSeq = Annotated[
    int, Parameter(ge=1, le=LAST_SEQ, description="Last seq to export (default: the end).")
]
Limit = Annotated[int, Parameter(ge=1, le=500, description="Most entries in one page.")]
TablePath = Annotated[
    str,
    Parameter(
        min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="The table's name."
    ),
]


SeedId = Annotated[
    str, Parameter(pattern=r"^s[A-Za-z0-9_-]{16}$", description="The seed session's id.")
]


TreeSize = Annotated[
    int, Parameter(ge=1, le=LAST_SEQ, description="The size of the tree (a checkpoint's).")
]


@dataclass
class OptionalBody(Operation):
    """The body may be left out: not required, and its schema the struct (no null)."""

    def __post_init__(self) -> None:
        body = self.request_body
        if isinstance(body, RequestBody):
            body.required = False
            for media in body.content.values():
                schema = media.schema
                if isinstance(schema, Schema) and schema.one_of:
                    media.schema = schema.one_of[0]
