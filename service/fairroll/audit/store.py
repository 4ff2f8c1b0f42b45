"""The audit store: a table's signed log in Redis, appended by group commit and read back.

``AuditStore`` is the one object the web layer and the command line hold. It reads
(``reader.LogReader``) and delegates each other job to its room in ``audit.redis``:
appends to ``commit`` (durable before answered, never forking the chain, never
re-issuing a seq: ``tips``), keys to ``keyring``, tables to ``tables``, and checkpoints,
archives and epochs to ``maintenance``. Every Redis key is named in ``audit.keyspace``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from fairroll.audit.checkpoint import DEFAULT_LOG_NAME, Checkpoint
from fairroll.audit.entry import (
    KEY_RETIRE_MECHANIC,
    POLICY_MECHANIC,
    Claim,
    Draft,
    Entry,
    Head,
    TablePolicy,
)
from fairroll.audit.merkle import Frontier
from fairroll.audit.reader import LogReader
from fairroll.audit.redis import reads
from fairroll.audit.redis.append import SHOWN_TOKEN, Marker, ShownToken, TokenRefusedError
from fairroll.audit.redis.commit import GroupCommit, Recorded
from fairroll.audit.redis.connection import AnyRedis, connect_redis, is_cluster
from fairroll.audit.redis.cosignatures import Cosignatures
from fairroll.audit.redis.durability import Durability, DurabilityWatch
from fairroll.audit.redis.errors import (
    AlreadyRecordedError,
    AppendConflictError,
    ClaimRefusedError,
    NotDurableError,
    StoreFullError,
    StoreUnavailableError,
    TableFencedError,
)
from fairroll.audit.redis.keyring import KeyRing
from fairroll.audit.redis.maintenance import Maintenance
from fairroll.audit.redis.tables import Tables
from fairroll.audit.redis.tips import FenceAlarm, Tips
from fairroll.audit.redis.verified import VerifiedStates
from fairroll.audit.signing import PublicKey, Signer

__all__ = [
    "SHOWN_TOKEN",
    "AlreadyRecordedError",
    "AnyRedis",
    "AppendConflictError",
    "AuditStore",
    "ClaimRefusedError",
    "Durability",
    "Marker",
    "NotDurableError",
    "Recorded",
    "ShownToken",
    "StoreFullError",
    "StoreUnavailableError",
    "TableFencedError",
    "TokenRefusedError",
    "connect_redis",
]


class AuditStore(LogReader):
    """Appends and reads signed entries in Redis."""

    def __init__(
        self,
        redis: AnyRedis,
        signer: Signer,
        *,
        replicas: int = 0,
        allow_unsafe: bool = False,
        on_fence: FenceAlarm | None = None,
        log_name: str = DEFAULT_LOG_NAME,
        root_key_id: str | None = None,
        on_durability: Callable[[Durability], None] | None = None,
    ) -> None:
        cluster = is_cluster(redis)
        self.redis = redis
        self.signer = signer
        self.log_name = log_name
        #: The pinned root this server's own verifications trust keys from.
        self.root_key_id = root_key_id or signer.certificate.certified_by
        self.watch = DurabilityWatch(
            redis, replicas=replicas, allow_unsafe=allow_unsafe, on_probe=on_durability
        )
        self.keyring = KeyRing(redis, signer)
        self.tips = Tips(redis, self, on_fence)
        self.directory = Tables(redis)
        self.commit = GroupCommit(
            redis, signer, self.tips, self.keyring, self.watch, cluster=cluster, log_name=log_name
        )
        self.upkeep = Maintenance(redis, signer, self.tips, self, log_name)
        self.cosignatures = Cosignatures(redis)
        #: Where this server's own verification of each table stopped.
        self.verified = VerifiedStates(redis, signer)

    @property
    def replicas(self) -> int:
        return self.watch.replicas

    @property
    def durability(self) -> Durability | None:
        """What Redis guaranteed when last asked (None: not asked yet)."""
        return self.watch.current

    async def key_retired(self) -> bool:
        """Whether this server's signing key was retired, by any process (asks Redis)."""
        await self.keyring.refresh()
        return self.keyring.own_retired

    def now(self) -> float:
        """Now by Redis's clock (POSIX seconds): the one clock every process shares, so
        a time-dependent rule does not follow one server's clock."""
        return self.watch.redis_time()

    @property
    def fenced(self) -> dict[str, tuple[int, int]]:
        """Stopped tables: (the seq this process holds, the seq Redis showed)."""
        return self.tips.fenced

    # Appends

    async def append(self, draft: Draft, marker: Marker | None = None) -> Entry:
        """Chain, sign and store ``draft``; return the entry once Redis holds it durably."""
        return (await self.commit.record(draft, marker)).entry

    async def record(self, draft: Draft, marker: Marker | None = None) -> Recorded:
        """``append``, answering the entry with its leaf hash."""
        return await self.commit.record(draft, marker)

    async def probe_durability(self) -> Durability:
        """Ask Redis what an acknowledged append is worth now (see ``durability``)."""
        return await self.watch.probe()

    # The tip

    async def tip(self, table: str) -> tuple[Head, Frontier]:
        return await self.tips.tip(table)

    async def head(self, table: str) -> Head:
        return await self.tips.head(table)

    async def read_head(self, table: str) -> tuple[Head, TableFencedError | None]:
        """The head as Redis holds it, for reading what a table's log holds, and why
        appends to the table are stopped (None: they are not): a stopped table's
        surviving log stays readable, marked stopped."""
        try:
            return await self.tips.head(table), None
        except TableFencedError as stopped:
            return await reads.head_of(self.redis, table), stopped

    async def log_length(self, table: str) -> tuple[int, int]:
        """How many entries the table's log holds (after its archive base), and its
        head's seq, read together (one transaction)."""
        length, head = await reads.length_and_head(self.redis, table)
        return length, head.seq

    async def last_signed(self, table: str) -> tuple[int, bytes] | None:
        """The size and root of the last checkpoint this log's server signed (every
        round's, and every ``GET .../checkpoint``'s), None if none was."""
        raw = await reads.signed_mark(self.redis, table)
        if not raw:
            return None
        size, _, root = (raw.decode() if isinstance(raw, bytes) else str(raw)).partition(" ")
        return int(size), bytes.fromhex(root)

    # Keys

    async def publish_key(self) -> None:
        await self.keyring.publish()

    async def public_keys(self) -> list[PublicKey]:
        return await self.keyring.public_keys()

    async def retire_key(self, key_id: str) -> PublicKey | None:
        """Retire a key: recorded in the key set now (every process stops signing with it,
        and adds a ``key.retire`` entry to each table it appends to), and retired at once
        in every table's log here (``retire_in``), so no entry it signs can follow."""
        return await self.keyring.retire(key_id)

    async def retire_in(self, table: str, key_id: str) -> Entry | None:
        """Append a ``key.retire`` of ``key_id`` to the table's log, unless the log never
        published the key or already retired it."""
        await self.tips.tip(table)
        if self.tips.key_states.get(table, {}).get(key_id) != "live":
            return None
        claim = Claim(kind="retire", key_id=key_id)
        return await self.append(
            Draft.statement(table, KEY_RETIRE_MECHANIC, {"key_id": key_id}, claim)
        )

    # Tables

    async def create_table(self, policy: TablePolicy | None = None) -> tuple[str, str]:
        """A new table with an unguessable id and a write key; only the key's hash is kept.
        A policy other than the default is recorded as the table's first entry."""
        policy = policy or TablePolicy()
        table, write_key = await self.directory.create(policy)
        if policy != TablePolicy():
            await self.append(Draft.statement(table, POLICY_MECHANIC, policy))
        return table, write_key

    async def policy(self, table: str) -> TablePolicy:
        return await self.directory.policy(table)

    async def key_matches(self, table: str, key: str | None) -> bool | None:
        """None: the table has no write key (open). Else whether ``key`` is its write key."""
        return await self.directory.key_matches(table, key)

    def tables(self) -> AsyncIterator[str]:
        """Every table with a log (a scan of the heads)."""
        return self.directory.names()

    # Upkeep

    async def genesis(self, table: str) -> Checkpoint:
        return self.upkeep.genesis(table)

    async def checkpoint(self, table: str) -> Checkpoint:
        return await self.upkeep.checkpoint(table)

    async def archive(self, table: str, through: int) -> Checkpoint:
        return await self.upkeep.archive(table, through)

    async def open_epoch(self, table: str, resume_after: int, reason: str) -> Entry:
        return await self.upkeep.open_epoch(table, resume_after, reason)
