"""What a process knows of each table's tip, and the fence that keeps seqs from repeating.

Per table, a process keeps the head it last saw, its Merkle tree's *frontier* (so an
append computes the tree's new hashes without reading the tree), the state of each
signing key in the table's log, and an *anchor*: the last entry it acknowledged or
read (only acknowledged where replicas are required: ``read_anchors``). Redis must
still hold the anchor (same seq, same hash) for the table to take
appends from this process. A head read behind the anchor, or at its seq with another
hash, *fences* the table: every later append answers 503, an alarm metric counts it
(``on_fence``) and a log line names the seqs, because chaining on that head would
re-issue seqs that players already hold receipts for.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

import msgspec

from fairroll.audit import merkle
from fairroll.audit.entry import Head, jcs, leaf_hash
from fairroll.audit.keyspace import head_key, tip_keys, tree_key
from fairroll.audit.merkle import Frontier
from fairroll.audit.redis.connection import AnyRedis, pipelined
from fairroll.audit.redis.errors import AppendConflictError, TableFencedError
from fairroll.audit.redis.scripts import SET_TREE, TIP

if TYPE_CHECKING:
    from fairroll.audit.reader import LogReader

__all__ = ["MAX_ATTEMPTS", "FenceAlarm", "Tips", "head_value", "parse_head", "text"]

#: Tries at an operation while other writers keep moving the head.
MAX_ATTEMPTS = 100
_HEAD_CACHE = 10_000
#: Tables whose last acknowledged entry a process remembers (about 150 bytes each).
_ANCHORS = 1_000_000

#: Told of a fenced table: (table, the seq this process holds, the seq Redis showed).
FenceAlarm = Callable[[str, int, int], None]

_log = logging.getLogger("fairroll.audit")


class Tips:
    """The heads, frontiers, key states and anchors of the tables this process writes."""

    def __init__(self, redis: AnyRedis, reader: LogReader, on_fence: FenceAlarm | None) -> None:
        self.redis = redis
        self._reader = reader
        self._on_fence = on_fence
        self.heads: dict[str, Head] = {}
        self.frontiers: dict[str, Frontier | None] = {}
        #: Per table: each key's state in its log (``live`` once published, ``retired``).
        self.key_states: dict[str, dict[str, str]] = {}
        self.anchors: dict[str, Head] = {}
        #: Tables whose log went back or forked: (anchor seq, head seq Redis showed).
        self.fenced: dict[str, tuple[int, int]] = {}
        #: Whether a head read is an anchor. Not where replicas are required: a read can
        #: see a round they do not hold (answered "may have been recorded"), which a
        #: failover may lose without losing anything acknowledged.
        self.read_anchors = True

    async def tip(self, table: str) -> tuple[Head, Frontier]:
        """The table's head and its tree's frontier, read together (a table from before
        trees gets its tree first). Fences like ``head``."""
        if table in self.fenced:
            raise self.fence_error(table)
        for _ in range(MAX_ATTEMPTS):
            known = self.anchors.get(table)
            keys = tip_keys(table)
            raw = await self.redis.eval(TIP.text, len(keys), *keys)
            if not self.learn_tip(table, cast(list[Any], raw), known=known):
                raise self.fence_error(table)
            if table not in self.heads:
                continue  # older news than an append answered meanwhile: read again
            head, frontier = self.heads[table], self.frontiers.get(table)
            if head.seq and self.read_anchors:
                self.anchor(table, head)
            if frontier is not None:
                return head, frontier
            await self.build_tree(table)
        raise AppendConflictError(f"table {table!r} is too busy to read its tree")

    async def head(self, table: str) -> Head:
        """The table's head in Redis; a head behind what this process acknowledged (or
        read) fences the table and raises, so no checkpoint is signed on it."""
        if table in self.fenced:
            raise self.fence_error(table)
        known = self.anchors.get(table)
        head = parse_head(await self.redis.get(head_key(table)) or b"")
        if not self.learn(table, head, known=known):
            raise self.fence_error(table)
        newer = self.anchors.get(table)
        if newer is not None and newer.seq > head.seq:
            return newer  # an append answered while the read was on its way: Redis has it
        if head.seq and self.read_anchors:
            self.anchor(table, head)
        return head

    async def fetch(self, tables: list[str]) -> list[list[Any] | BaseException]:
        """Each table's tip as the tip script returns it, or the error fetching it met,
        in one round trip."""
        return await pipelined(self.redis, [_tip_call(t) for t in tables])

    async def build_tree(self, table: str) -> None:
        """Give a table from before Merkle trees (format 1) its tree, from its entries."""
        head = parse_head(await self.redis.get(head_key(table)) or b"")
        if head.seq and await self._reader.base(table) is not None:
            raise ValueError(
                f"table {table!r} was archived before Merkle trees: its tree cannot be built"
            )
        frontier, stored = Frontier.empty(), bytearray()
        async for raw in self._reader.raw_entries(table, until=head.seq):
            entry = msgspec.json.decode(raw)
            while frontier.size + 1 < entry["seq"]:  # seqs an epoch declared lost
                frontier, new = frontier.append(merkle.lost_leaf(frontier.size + 1))
                stored += b"".join(new)
            frontier, new = frontier.append(leaf_hash(jcs(entry)))
            stored += b"".join(new)
        if frontier.size != head.seq:
            raise ValueError(f"table {table!r}: the log does not reach its head")
        await self.redis.eval(
            SET_TREE.text, 2, head_key(table), tree_key(table), head_value(head), bytes(stored)
        )
        self.forget(table)

    def learn(
        self,
        table: str,
        head: Head,
        frontier: Frontier | None = None,
        *,
        known: Head | Literal[False] | None = False,
    ) -> bool:
        """Take a head read from Redis; False (and the table fenced) if it is behind the
        anchor this process held when the read was sent (``known``; the anchor now when
        not given), or at an anchor's seq with another hash.

        Reads and appends travel on different connections: a read sent before an append
        can be answered after it, and report the head the append moved on from. Behind
        only an anchor set while it was on its way, a head is older news, not a log that
        went back: it is not kept, and nothing is fenced (a Redis frozen and thawed
        answers both at once, and fencing then stopped a table that lost nothing)."""
        current = self.anchors.get(table)
        anchor = current if known is False else known
        if anchor is not None and (
            head.seq < anchor.seq or (head.seq == anchor.seq and head != anchor)
        ):
            self.fence(table, head.seq)
            return False
        if current is not None and head.seq <= current.seq:
            if head.seq == current.seq and head != current:
                self.fence(table, head.seq)  # another entry at a seq this process holds
                return False
            if head.seq < current.seq:
                return True  # older news
        self.remember(table, head, frontier)
        return True

    def learn_tip(
        self, table: str, tip: list[Any], *, known: Head | Literal[False] | None = False
    ) -> bool:
        """``learn`` from a head, its keys' states and its tree's frontier hashes as the
        scripts return them (an empty hash: the table has no tree yet)."""
        head = parse_head(tip[0] or b"")
        flat = [text(v) for v in tip[1]] if len(tip) > 1 and isinstance(tip[1], list) else []
        hashes = [bytes(h) if not isinstance(h, str) else h.encode() for h in tip[2:]]
        frontier = (
            None
            if any(len(h) != merkle.HASH_SIZE for h in hashes)
            else Frontier.of(head.seq, hashes)
        )
        if not self.learn(table, head, frontier, known=known):
            return False
        if self.heads.get(table) == head:  # kept, not older news: its key states too
            self.key_states[table] = dict(zip(flat[::2], flat[1::2], strict=True))
        return True

    def fence(self, table: str, seen: int) -> None:
        """Stop appends to a table whose log in Redis ends at ``seen``, behind its anchor."""
        anchor = self.anchors.get(table, Head.empty())
        _log.error(
            "table %r: Redis holds its log up to seq %d, but this process acknowledged or "
            "read seq %d (%s...); appends to the table are stopped so no acknowledged seq "
            "is re-issued. See docs/operations.md, 'A table's log went back'.",
            table,
            seen,
            anchor.seq,
            anchor.entry_hash[:16],
        )
        self.stop(table, anchor.seq, seen)

    def stop(self, table: str, held: int, seen: int) -> None:
        """Fence a table: this process holds seq ``held``, Redis showed ``seen``."""
        self.fenced[table] = (held, seen)
        self.forget(table)
        if self._on_fence is not None:
            self._on_fence(table, held, seen)

    def fence_error(self, table: str) -> TableFencedError:
        acked, seen = self.fenced[table]
        return TableFencedError(
            f"table {table!r} is stopped: its log in the audit store ends at seq {seen} "
            f"(or was rewritten), behind seq {acked} this server acknowledged; nothing was "
            "recorded. An operator must restore the log or open a new epoch."
        )

    def anchor(self, table: str, head: Head) -> None:
        anchors = self.anchors
        if table not in anchors and len(anchors) >= _ANCHORS:
            # Forget the oldest half (insertion order) rather than everything.
            for stale in list(itertools.islice(anchors, _ANCHORS // 2)):
                del anchors[stale]
        anchors[table] = head

    def forget(self, table: str) -> None:
        """Drop the cached head and frontier: the next append reads both again."""
        self.heads.pop(table, None)
        self.frontiers.pop(table, None)

    def remember(self, table: str, head: Head, frontier: Frontier | None = None) -> None:
        """Keep a head (and its tree's frontier: None if not known, or no tree yet)."""
        if len(self.heads) >= _HEAD_CACHE:
            self.heads.clear()
            self.frontiers.clear()
        known = self.heads.get(table)
        self.heads[table] = head
        if frontier is not None and frontier.size == head.seq:
            self.frontiers[table] = frontier
        elif known != head:
            self.frontiers.pop(table, None)


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def head_value(head: Head) -> str:
    """A head as the head key holds it: ``<seq>:<entry_hash>``, empty for no entry."""
    return "" if head.seq == 0 else f"{head.seq}:{head.entry_hash}"


def parse_head(value: bytes | str) -> Head:
    plain = value.decode() if isinstance(value, bytes) else value
    if not plain:
        return Head.empty()
    seq, entry_hash = plain.split(":", 1)
    return Head(int(seq), entry_hash)


def _tip_call(table: str) -> tuple[str | int, ...]:
    """The tip script's EVAL of ``table``: its text, how many KEYS it takes (counted
    from ``keyspace.tip_keys``, as ``tip`` counts them), the keys."""
    keys = tip_keys(table)
    return ("EVAL", TIP.text, len(keys), *keys)
