"""Server-Sent Events of a table (``GET /v1/tables/{table}/events``), parsed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "EventReader", "parse_events"]


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
    reader = EventReader()
    for line in lines:
        event = reader.feed(line)
        if event is not None:
            yield event


class EventReader:
    """An event stream read line by line (``feed``), by the sync and the async client."""

    def __init__(self) -> None:
        self._kind, self._data = "message", list[str]()

    def feed(self, raw: str) -> Event | None:
        """The event this line ends, if it ends one."""
        line = raw.rstrip("\r\n")
        if not line:
            kind, data = self._kind, self._data
            self._kind, self._data = "message", []
            return _event(kind, "\n".join(data)) if data else None
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            self._kind = value
        elif field == "data":
            self._data.append(value)
        return None


def _event(kind: str, data: str) -> Event:
    said = json.loads(data)
    if kind == "entry":
        return Event(kind, seq=said["entry"]["seq"], entry=said["entry"], words=said["words"])
    return Event(kind, checkpoint=said)
