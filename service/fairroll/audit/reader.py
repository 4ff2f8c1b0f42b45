"""The read side of a table's log: entries, pages, raw JSON for exports, tree hashes and
the proofs made of them, and the signed base of an archived log. The store
(``audit.store``) is the write side: it appends by group commit (``audit.redis``) and
keeps the tip; it inherits these reads.

Entries are stored in the table's stream (``keyspace.log_key``) as field ``z``, the
entry's JSON deflated (raw deflate), or as field ``e`` (plain JSON, older entries).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, cast

import msgspec

from fairroll.audit import merkle
from fairroll.audit.checkpoint import Checkpoint
from fairroll.audit.entry import Entry, Head
from fairroll.audit.merkle import Frontier
from fairroll.audit.redis import reads
from fairroll.audit.redis.connection import AnyRedis

__all__ = ["PAGE", "LogReader", "stored_json"]

#: Entries read a page at a time.
PAGE = 500

_entry_decoder = msgspec.json.Decoder(Entry)


class LogReader:
    """Reads of a table's log through ``redis`` (each asked in ``audit.redis.reads``);
    ``tip`` (the head and tree frontier the proofs are bounded by) is the store's."""

    redis: AnyRedis

    async def tip(self, table: str) -> tuple[Head, Frontier]:
        raise NotImplementedError

    async def entry(self, table: str, seq: int) -> Entry | None:
        rows = await self._range(table, f"{seq}-0", f"{seq}-0", 1)
        return _entry_decoder.decode(stored_json(rows[0][1])) if rows else None

    async def entries(self, table: str, *, after: int = 0, limit: int = PAGE) -> list[Entry]:
        """Up to ``limit`` entries with seq greater than ``after``, in order."""
        rows = await self._range(table, f"{after + 1}-0", "+", limit)
        return [_entry_decoder.decode(stored_json(fields)) for _, fields in rows]

    async def base(self, table: str) -> Checkpoint | None:
        """The signed checkpoint the table's log was archived through, if it was."""
        raw = await reads.archived_base(self.redis, table)
        return None if raw is None else msgspec.json.decode(raw, type=Checkpoint)

    async def read_hashes(self, table: str, indices: list[int]) -> list[bytes]:
        """Stored tree hashes by index (``merkle.stored_index``), in one round trip."""
        if not indices:
            return []
        raw = await reads.tree_hashes(self.redis, table, indices)
        hashes = [bytes(h) if not isinstance(h, str) else h.encode() for h in raw]
        if any(len(h) != merkle.HASH_SIZE for h in hashes):
            raise ValueError(f"table {table!r}: its tree lacks hashes it should hold")
        return hashes

    async def prove(self, table: str, spans: Callable[[merkle.Reader], Any]) -> Any:
        """Run a proof function twice: once to learn which hashes it reads, then on them
        (which hashes a proof reads never depends on their values)."""
        wanted: list[int] = []

        def record(indices: Sequence[int]) -> list[bytes]:
            wanted.extend(indices)
            return [b"\0" * merkle.HASH_SIZE] * len(indices)

        spans(record)
        hashes = dict(zip(wanted, await self.read_hashes(table, wanted), strict=True))
        return spans(lambda indices: [hashes[i] for i in indices])

    async def inclusion_proof(self, table: str, seq: int, size: int) -> tuple[bytes, list[bytes]]:
        """(leaf hash of entry ``seq``, its RFC 9162 inclusion proof in the tree of
        ``size``); ValueError if the table's tree is smaller."""
        head, _ = await self.tip(table)
        if size > head.seq:
            raise ValueError(f"the table has {head.seq} entries, not {size}")
        if not 1 <= seq <= size:
            raise ValueError(f"entry {seq} is not in a tree of {size} entries")
        leaf, *_ = await self.read_hashes(table, [merkle.stored_index(0, seq - 1)])
        proof = await self.prove(table, lambda r: merkle.inclusion_proof(seq - 1, size, r))
        return leaf, cast(list[bytes], proof)

    async def consistency_proof(self, table: str, old: int, new: int) -> list[bytes]:
        """RFC 9162 proof that the table's tree of ``old`` entries is a prefix of ``new``."""
        head, _ = await self.tip(table)
        if new > head.seq:
            raise ValueError(f"the table has {head.seq} entries, not {new}")
        if old > new:
            raise ValueError(f"size {old} is larger than size {new}")
        proof = await self.prove(table, lambda r: merkle.consistency_proof(old, new, r))
        return cast(list[bytes], proof)

    async def raw_entries(
        self, table: str, *, after: int = 0, until: int | None = None
    ) -> AsyncIterator[bytes]:
        """Every stored entry's JSON from seq ``after + 1`` (to ``until``), a page at a time."""
        start = f"{after + 1}-0"
        end = "+" if until is None else f"{until}-0"
        while True:
            rows = await self._range(table, start, end, PAGE)
            for _, fields in rows:
                yield stored_json(fields)
            if len(rows) < PAGE:
                return
            last_seq = int(rows[-1][0].split(b"-")[0])
            start = f"{last_seq + 1}-0"

    async def raw_page(
        self, table: str, *, after: int, until: int, limit: int = PAGE
    ) -> list[tuple[int, bytes]]:
        """Up to ``limit`` (seq, stored JSON) with ``after < seq <= until``, in order."""
        if until <= after:
            return []
        rows = await self._range(table, f"{after + 1}-0", f"{until}-0", limit)
        return [(int(stream_id.split(b"-")[0]), stored_json(fields)) for stream_id, fields in rows]

    async def _range(self, table: str, start: str, end: str, count: int) -> list[reads.Row]:
        return await reads.log_rows(self.redis, table, start, end, count)


def stored_json(fields: dict[bytes, bytes]) -> bytes:
    packed = fields.get(b"z")
    return zlib.decompress(packed, wbits=-15) if packed is not None else fields[b"e"]
