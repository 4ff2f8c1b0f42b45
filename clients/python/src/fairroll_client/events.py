"""Server-Sent Events of a table (``GET /v1/tables/{table}/events``), parsed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "parse_events"]


@dataclass(frozen=True, slots=True)
class Event:
    """One event: ``kind`` is ``entry`` (``entry`` and ``words`` set, ``seq`` its seq) or
    ``checkpoint`` (``checkpoint`` set)."""

    kind: str
    seq: int | None = None
    entry: dict[str, Any] | None = None
    words: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None


def parse_events(lines: Iterable[str]) -> Iterator[Event]:
    """The events in an event stream's lines (the WHATWG format; comments skipped).

    >>> stream = ["id: 1", "event: entry", 'data: {"entry": {"seq": 1}, "words": null}', ""]
    >>> next(parse_events(stream)).seq
    1
    """
    kind, data = "message", []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield _event(kind, "\n".join(data))
            kind, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            kind = value
        elif field == "data":
            data.append(value)


def _event(kind: str, data: str) -> Event:
    said = json.loads(data)
    if kind == "entry":
        return Event(kind, seq=said["entry"]["seq"], entry=said["entry"], words=said["words"])
    return Event(kind, checkpoint=said)
