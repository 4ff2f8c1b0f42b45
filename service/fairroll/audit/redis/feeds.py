"""Following a table as it grows (``play.events``): its log and its kept cosignatures
are Redis streams (``keyspace.log_key``, ``keyspace.cosigned_key``), so one blocking
``XREAD`` follows both, whichever replica appends. A follower starts after the newest
of each (what came before, a subscriber reads from the log), and remembers the last id
it read of each, so a read after a dropped connection goes on without a gap.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from redis.exceptions import RedisError

from fairroll.audit.keyspace import cosigned_key, log_key
from fairroll.audit.reader import stored_json

__all__ = ["Arrival", "TableFollower"]


class Arrival(NamedTuple):
    """What a read found: an entry (its seq and its JSON as signed) or a kept
    cosignature (its JSON, as ``GET .../cosignatures`` lists it; seq 0)."""

    kind: Literal["entry", "cosignature"]
    seq: int
    data: bytes


class TableFollower:
    """One table's log and cosignatures, followed by one client of ``redis`` (a client
    whose timeout outlasts a blocking read)."""

    def __init__(self, redis: Any, table: str) -> None:
        # Any: redis-py types a stream's replies more loosely than Redis answers them.
        self.redis = redis
        self.log, self.cosigned = log_key(table), cosigned_key(table)
        self.last: dict[str, bytes] = {self.log: b"0-0", self.cosigned: b"0-0"}

    async def start(self) -> None:
        """Start after the newest of each stream. A stream Redis did not answer for is
        followed from its start: its subscribers' gap checks heal what it repeats."""
        for stream in (self.log, self.cosigned):
            try:
                newest = await self.redis.xrevrange(stream, count=1)
            except RedisError:
                continue
            if newest:
                self.last[stream] = newest[0][0]

    async def read(self, count: int, block_ms: int) -> list[Arrival]:
        """What arrived after the last read, at most ``count`` of each stream, waiting
        up to ``block_ms`` for the first; ``RedisError`` when Redis does not answer."""
        reply = await self.redis.xread(self.last, count=count, block=block_ms)
        arrived = []
        for name, rows in reply or ():
            stream = name.decode() if isinstance(name, bytes) else name
            for stream_id, fields in rows:
                self.last[stream] = stream_id
                if stream == self.cosigned:
                    arrived.append(Arrival("cosignature", 0, fields[b"c"]))
                else:
                    seq = int(stream_id.split(b"-")[0])
                    arrived.append(Arrival("entry", seq, stored_json(fields)))
        return arrived
