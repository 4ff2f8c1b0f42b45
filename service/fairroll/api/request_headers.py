"""The request headers fairroll reads, each parsed with a bound and refused with a 4xx.

A header is bytes from anyone: read as Latin-1 (every byte is a character), so it is
checked as text fairroll understands or refused with a 422 naming the header, never a
500. Where a header decides what is recorded or who may record, two of it are
ambiguous (which one did the client mean, which one did a proxy add?) and refused:
``Idempotency-Key`` (a retry naming the second key recorded a second roll),
``Authorization`` and ``Fairroll-Session-Token``.

``Last-Event-ID`` is a seq: ASCII digits only (``str.isdigit`` also takes ``²``, which
``int`` refuses), at most ``LAST_SEQ``.

>>> last_event_id("12", None)
12
>>> last_event_id(None, 3)
3
"""

from __future__ import annotations

from typing import Any

from litestar.exceptions import ValidationException

__all__ = ["HEADER_BYTES", "LAST_SEQ", "last_event_id", "refuse", "single"]

#: The largest seq a header may name (the routes' own bound on a seq).
LAST_SEQ = 2**53

#: The longest value fairroll reads of any header it parses.
HEADER_BYTES = 4096
_DIGITS = frozenset("0123456789")


def refuse(name: str, why: str) -> ValidationException:
    """A 422 naming the header at fault."""
    return ValidationException(
        detail=f"{name}: {why}", extra=[{"key": name, "message": why, "source": "header"}]
    )


def single(headers: Any, name: str) -> str | None:
    """The one value of header ``name`` (None: not sent); two or more are refused, as
    is a value longer than ``HEADER_BYTES``."""
    values = headers.getall(name.lower(), [])
    if not values:
        return None
    if len(values) > 1:
        raise refuse(name, f"sent {len(values)} times: send it once")
    value: str = values[0]
    if len(value) > HEADER_BYTES:
        raise refuse(name, f"longer than {HEADER_BYTES} characters")
    return value


def last_event_id(header: str | None, after: int | None) -> int:
    """Where a stream resumes: ``Last-Event-ID`` (a seq) wins over ``?after=``; an empty
    one is none."""
    if header is None or not header.strip():
        return after or 0
    text = header.strip()
    if len(text) > len(str(LAST_SEQ)) or not set(text) <= _DIGITS or int(text) > LAST_SEQ:
        raise refuse("Last-Event-ID", f"must be a seq: ASCII digits, at most {LAST_SEQ}")
    return int(text)
