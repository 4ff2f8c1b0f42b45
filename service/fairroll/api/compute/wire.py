"""The frames between the compute pool and its workers: an 8-byte big-endian length, then
a pickle of plain tuples (only ever read from our own parent or child)."""

from __future__ import annotations

import struct

__all__ = ["FRAME", "Request", "Response"]

FRAME = struct.Struct(">Q")
#: method, path, query, headers, body, client
Request = tuple[str, str, bytes, list[tuple[bytes, bytes]], bytes, tuple[str, int] | None]
#: status, headers, body
Response = tuple[int, list[tuple[bytes, bytes]], bytes]
