"""Group commit: a process's appends, a round trip per round, durable before answered.

An append is a compare-and-append Lua script (``lua/append.lua``): it adds entries only
if the head is still the one they were chained on, so concurrent writers in any number
of processes never fork the chain or reuse a seq.

Within one process, appends to a table are group-committed: while one batch is on its
way to Redis, further drafts for that table queue up; the next batch chains all of them
(up to ``MAX_BATCH``) in order and sends them in one script call. Each caller gets its
entry only after the script that stored it succeeded. The head is cached (``tips``), so
the script succeeds first time unless another process wrote in between; then the batch
is re-chained on the head the script returned and tried again, with jittered back-off.

An answer leaves only once its round is durable: the round's scripts are followed, in
the same write on the same connection (``connection.send_batch``; on a cluster, one
write per node, ``connection.send_to_node``), by ``WAITAOF 1 0`` (Redis >= 7.2) or the
``CONFIG GET``s ``appendfsync always`` rests on, and by ``WAIT`` where replicas are
required (``durability``). A round not confirmed in time is answered "may have been
recorded", and its entries are not the table's anchor (a failover may lose them). A
round is sent once: only a batch that never reached Redis (``NotSentError``) is sent
again; after any other failure the roll may have been recorded, and sending it again
would chain it a second time.

The script refuses a batch (and the process fences the table, ``tips``) when the
anchor's seq is gone from the stream or holds another hash.

An idempotency marker (``Marker``) travels with its draft: the script stores the entry
only if the key is not done yet, and marks it ``done:<fingerprint>:<seq>`` in the same
atomic step, so a recorded roll is never left without its marker. A key found done is
written back unchanged by the script, so the round's checks cover the roll it names
before that roll is answered as the retry's.

A draft's seed-session *claim* (``entry.Claim``) is checked and done by the same script:
a committed roll is stored only if its session is open and at the nonce just before the
roll's, and moves it on; a commitment creates the session; a reveal closes it. So nonces
are consecutive in log order, a refused roll consumes none, and no roll follows a reveal.
The session token a roll showed (``append.ShownToken``, set by its caller in
``append.SHOWN_TOKEN``) is checked by the same script, before anything is written, so a
roll in a session makes no round trip of its own for it (``play.sessions``).

The script's maxmemory guard runs when ``append.MemoryGuard`` says it is due (per node):
it costs the script more than anything else it does, and far from full it need not run
on every call.

The script also extends the table's Merkle tree (``merkle``) with the batch's hashes,
computed by the process from the tree's frontier.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from redis.asyncio import RedisCluster
from redis.exceptions import NoScriptError, RedisError

from fairroll.audit import merkle
from fairroll.audit.checkpoint import Checkpoint, sign_checkpoint
from fairroll.audit.entry import (
    KEY_RETIRE_MECHANIC,
    Claim,
    Draft,
    Entry,
    Head,
    canonical,
    leaf_hash,
    now_rfc3339,
)
from fairroll.audit.keyspace import (
    session_key,
)
from fairroll.audit.redis.append import (
    ALREADY_DONE,
    CLAIM_REFUSED,
    FENCED,
    FULL,
    KEY_STATES_KEY,
    NO_TREE,
    SHOWN_TOKEN,
    STORED,
    TOKEN_REFUSED,
    Marker,
    MemoryGuard,
    ShownToken,
    TokenRefusedError,
    append_args,
    append_keys,
    entry_args,
    script_result,
)
from fairroll.audit.redis.connection import AnyRedis, NotSentError, send_batch, send_to_node
from fairroll.audit.redis.durability import DurabilityWatch
from fairroll.audit.redis.errors import (
    AlreadyRecordedError,
    AppendConflictError,
    ClaimRefusedError,
    KeyRetiredError,
    NotDurableError,
    StoreFullError,
    StoreUnavailableError,
)
from fairroll.audit.redis.keyring import KeyRing
from fairroll.audit.redis.scripts import APPEND
from fairroll.audit.redis.tips import MAX_ATTEMPTS, Tips, parse_head, text
from fairroll.audit.signing import Signer, seal

__all__ = ["MAX_BATCH", "GroupCommit", "Recorded"]

MAX_BATCH = 64
CONFLICTS_BEFORE_BACKOFF = 2
#: A table's batch that keeps losing the head to other processes fails as too busy only
#: after ``MAX_ATTEMPTS`` losses *and* this long: on a loaded host one writer can lose
#: many rounds in a row without the table being overloaded.
CONFLICT_SECONDS = 3.0
#: The longest pause between two tries of a batch that keeps losing.
BACKOFF_CEILING = 0.02
#: Sends of a table's batch that never reached Redis (``NotSentError``: a node down
#: or moved while the client re-learns the topology), before its rolls fail.
CLUSTER_RETRIES = 2

_log = logging.getLogger("fairroll.audit")


class Recorded(NamedTuple):
    """An entry Redis holds durably, with its RFC 6962 leaf hash (the hash of its JCS
    bytes, which the append computed for the tree: a receipt needs it too), the signed
    checkpoint of its round (the tree after the round's batch: one signature for every
    entry of the batch) and the entry's inclusion proof in that tree."""

    entry: Entry
    leaf_hash: bytes
    checkpoint: Checkpoint | None = None
    proof: tuple[bytes, ...] = ()


class _Pending(NamedTuple):
    draft: Draft
    future: asyncio.Future[Recorded]
    marker: Marker | None
    #: A statement the store adds itself (a key retired): nobody awaits it.
    derived: bool = False
    #: A roll in a seed session: the session token it showed, for the script to check.
    shown: ShownToken | None = None


class _Chained(NamedTuple):
    """A table's batch sealed on its head: the entries, their JCS bytes and leaf hashes,
    the tree hashes they add and the tree's length before, the frontier once stored, and
    whether the batch publishes this server's key in the table."""

    head: Head
    entries: list[Entry]
    encoded: list[bytes]
    leaves: list[bytes]
    tree: bytes
    before: int
    frontier: merkle.Frontier
    publishes: bool
    #: The frontier the batch was chained on (with ``tree``, every hash a proof needs).
    start: merkle.Frontier
    #: The frontier before the batch's last entry: that entry's proof, read off it.
    last: merkle.Frontier


class GroupCommit:
    """Queues drafts per table and commits them round after round."""

    def __init__(
        self,
        redis: AnyRedis,
        signer: Signer,
        tips: Tips,
        keys: KeyRing,
        durability: DurabilityWatch,
        *,
        cluster: bool,
        log_name: str,
    ) -> None:
        self.redis = redis
        self.signer = signer
        self.log_name = log_name
        self.tips = tips
        self.keys = keys
        self.durability = durability
        self._cluster = cluster
        # With replicas required, what a read sees may be a round they do not hold yet
        # (answered "may have been recorded"): only confirmed rounds anchor the table.
        tips.read_anchors = not durability.replicas
        self._queues: dict[str, list[_Pending]] = {}
        self._flusher: asyncio.Future[None] | None = None
        self._attempts: dict[str, int] = {}
        self._losing_since: dict[str, float] = {}
        self._errors: dict[str, int] = {}
        self.memory = MemoryGuard()

    async def record(self, draft: Draft, marker: Marker | None = None) -> Recorded:
        """Chain, sign and store ``draft``; answer once Redis holds it durably. A roll in
        a seed session is held to the token its caller set in ``SHOWN_TOKEN`` for it."""
        if draft.table in self.tips.fenced:
            raise self.tips.fence_error(draft.table)
        future: asyncio.Future[Recorded] = asyncio.get_running_loop().create_future()
        shown = SHOWN_TOKEN.get()
        claim = draft.claim
        if shown is not None and (
            claim is None or claim.kind != "roll" or claim.seed_id != shown.seed_id
        ):
            shown = None
        pending = _Pending(draft, future, marker, shown=shown)
        self._queues.setdefault(draft.table, []).append(pending)
        if self._flusher is None:
            # The flusher outlives a cancelled caller; it runs while anything is queued.
            self._flusher = asyncio.ensure_future(self._flush())
        return await future

    async def _flush(self) -> None:
        """Commit what is queued, round after round, until nothing is left.

        A round takes up to ``MAX_BATCH`` queued drafts of every table, chains each
        table's batch on that table's head and sends all the batches in one round trip
        (one write of one atomic script call per table, then the durability
        confirmation; on Redis Cluster, one call per table, concurrently, so a table
        whose master is down fails alone). A batch whose head another process moved
        goes back to the front of its table's queue and is re-chained in the next round.
        """
        try:
            while self._queues:
                round_: dict[str, list[_Pending]] = {}
                for table in list(self._queues):
                    queue = self._queues[table]
                    round_[table] = queue[:MAX_BATCH]
                    del queue[:MAX_BATCH]
                    if not queue:
                        del self._queues[table]
                try:
                    retry = await self._commit_round(round_)
                except Exception as exc:  # a bug must fail its callers, never hang them
                    _log.exception("audit append round failed")
                    for table, batch in round_.items():
                        self.tips.forget(table)
                        _fail(
                            batch, StoreUnavailableError(f"audit store error: {exc}", recorded=None)
                        )
                    retry = {}
                for table, batch in retry.items():
                    self._queues[table] = batch + self._queues.get(table, [])
                attempts = min((self._attempts.get(t, 0) for t in retry), default=0)
                if attempts > CONFLICTS_BEFORE_BACKOFF and len(self._queues) == len(retry):
                    # A conflict hands back the head another process just wrote, so a
                    # re-chained batch usually lands at once; only when a table keeps
                    # losing (and nothing else is waiting) back off, briefly, with jitter.
                    ceiling = min(BACKOFF_CEILING, 0.0002 * 2**attempts)
                    await asyncio.sleep(random.uniform(0, ceiling))  # noqa: S311
        finally:
            self._flusher = None

    async def _prepare(self, round_: dict[str, list[_Pending]]) -> bool:
        """Key published and durability known before a round; False: the round failed."""
        try:
            if not self.keys.published:
                await self.keys.publish()
            if self.durability.due():
                await self.durability.probe()
                await self.keys.refresh()
        except RedisError as exc:
            error = StoreUnavailableError(f"audit store unavailable: {exc}")
            for batch in round_.values():
                _fail(batch, error)
            return False
        durability = self.durability.current
        if durability is not None and not durability.accepted:
            error = NotDurableError(f"the audit store is not durable: {durability.detail}")
            for batch in round_.values():
                _fail(batch, error)
            return False
        return True

    async def _commit_round(self, round_: dict[str, list[_Pending]]) -> dict[str, list[_Pending]]:
        """One round trip for every batch; returns the batches to retry."""
        retry: dict[str, list[_Pending]] = {}
        if not await self._prepare(round_):
            return {}
        tips = self.tips
        # The anchors as the round starts: what Redis answers this round is held to them,
        # not to one a concurrent read set meanwhile (``Tips.learn``).
        known = {table: tips.anchors.get(table) for table in round_}
        for table in list(round_):
            if table in tips.fenced:
                _fail(round_.pop(table), tips.fence_error(table))
                continue
            # A second roll with the same Idempotency-Key waits for the next round, where
            # the first one's marker answers it.
            round_[table], later = _split_repeats(round_[table])
            if later:
                retry[table] = later
        unknown = [table for table in round_ if table not in tips.frontiers]
        if unknown:
            for table, value in zip(unknown, await tips.fetch(unknown), strict=True):
                if isinstance(value, BaseException):
                    self._failed(table, round_.pop(table), value, retry)
                elif not tips.learn_tip(table, value, known=known[table]):
                    _fail(round_.pop(table), tips.fence_error(table))
        missing = [t for t in round_ if tips.frontiers.get(t) is None]
        for table in missing:  # a table from before trees: build its tree once
            try:
                await tips.build_tree(table)
            except (RedisError, ValueError) as exc:
                _fail(round_.pop(table), StoreUnavailableError(f"audit store: {exc}"))
                continue
            retry[table] = round_.pop(table) + retry.get(table, [])
        for table in list(round_):
            batch = self._with_key_statements(table, round_[table])
            if batch is None:
                _fail(round_.pop(table), self._retired_error())
            else:
                round_[table] = batch
        chained = {table: self._chain(table, batch) for table, batch in round_.items()}
        nodes = {table: self._node(table) for table in round_}
        results, confirmed = await self._run_scripts(
            [
                self._script_call(table, round_[table], chained[table], nodes[table])
                for table in round_
            ]
        )
        for (table, batch), result, checked in zip(round_.items(), results, confirmed, strict=True):
            self._guarded(nodes[table], result)
            again = self._settle(table, batch, chained[table], result, checked, retry, known[table])
            if again:
                retry[table] = again + retry.get(table, [])
        return retry

    def _with_key_statements(self, table: str, batch: list[_Pending]) -> list[_Pending] | None:
        """The batch, after the statements the table's log needs first: a ``key.retire`` of
        each key retired since that the log still holds live. None: this server's own key
        was retired, so it appends nothing. (This server's key, if the log has not
        published it, is published by the certificate its first entry carries: ``_chain``.)"""
        own = self.signer.key_id
        states = self.tips.key_states.get(table, {})
        if self.keys.own_retired or states.get(own) == "retired":
            return None
        batch = [pending for pending in batch if not pending.derived]
        statements = [
            _statement(
                table, KEY_RETIRE_MECHANIC, {"key_id": key_id}, Claim(kind="retire", key_id=key_id)
            )
            for key_id in sorted(self.keys.retired)
            if states.get(key_id) == "live" and not _retires(batch, key_id)
        ]
        return statements + batch

    def _retired_error(self) -> KeyRetiredError:
        return KeyRetiredError(
            f"this server's signing key {self.signer.key_id} was retired: it signs no more "
            "entries; deploy the new key (FAIRROLL_SIGNING_KEY and its certificate)"
        )

    def _chain(self, table: str, batch: list[_Pending]) -> _Chained:
        """Seal the drafts onto the table's head, and extend its tree's frontier with them
        (kept for the script call and, once stored, as the new frontier)."""
        start, frontier = self.tips.heads[table], self.tips.frontiers[table]
        if frontier is None:  # callers build the tree first (``_commit_round``)
            raise ValueError(f"table {table!r} has no tree yet")
        before = merkle.stored_count(frontier.size) * merkle.HASH_SIZE
        entries, encoded, leaves, tree = [], [], [], bytearray()
        sealed_at = now_rfc3339()
        publishes = self.tips.key_states.get(table, {}).get(self.signer.key_id) != "live"
        publish, head = publishes, start
        last = frontier
        for pending in batch:
            entry = seal(pending.draft, head, self.signer, sealed_at, publish=publish)
            publish = False
            data = canonical(entry)
            leaf = leaf_hash(data)
            last = frontier
            frontier, stored = frontier.append(leaf)
            tree += b"".join(stored)
            entries.append(entry)
            encoded.append(data)
            leaves.append(leaf)
            head = Head(entry.seq, entry.entry_hash)
        return _Chained(
            start,
            entries,
            encoded,
            leaves,
            bytes(tree),
            before,
            frontier,
            publishes,
            self.tips.frontiers[table] or merkle.Frontier.empty(),
            last,
        )

    def _node(self, table: str) -> str:
        """The name of the node that holds the table ("" a single Redis), for
        ``MemoryGuard``."""
        if not isinstance(self.redis, RedisCluster):
            return ""
        try:
            node = self.redis.get_node_from_key(append_keys(table)[0])
        except Exception:  # the send says why; the guard just runs
            return "?"
        return node.name if node is not None else "?"

    def _guarded(self, node: str, result: tuple[int, Any] | BaseException) -> None:
        """Learn how full the node is from a script reply that ran the guard."""
        if isinstance(result, BaseException):
            self.memory.forget(node)
            return
        status, rest = result
        if status == FULL or (status == STORED and len(rest) == 3):
            self.memory.observe(node, int(rest[-2]), int(rest[-1]))

    def _script_call(
        self, table: str, batch: list[_Pending], chained: _Chained, node: str
    ) -> tuple[Any, ...]:
        last = chained.entries[-1]
        anchor = self.tips.anchors.get(table)
        keys = append_keys(table)
        args = append_args(
            chained.head,
            last,
            anchor,
            ttl=max((p.marker.ttl for p in batch if p.marker), default=0),
            # A session's last use, by Redis's clock: its expiry is decided by that clock.
            now_ms=int(self.durability.redis_time() * 1000),
            before=chained.before,
            tree=chained.tree,
            publishes=self.signer.key_id if chained.publishes else "",
            signed=(chained.frontier.size, chained.frontier.root()),
            guard=self.memory.due(node),
        )
        sessions: dict[str, int] = {}
        for pending, entry, data in zip(batch, chained.entries, chained.encoded, strict=True):
            index = 0
            if pending.marker is not None:
                keys.append(pending.marker.key)
                index = len(keys)
            claim = pending.draft.claim
            session = 0
            if claim is not None and claim.kind == "retire":
                session = KEY_STATES_KEY
            elif claim is not None:
                key = session_key(table, claim.seed_id)
                if key not in sessions:
                    keys.append(key)
                    sessions[key] = len(keys)
                session = sessions[key]
            fingerprint = pending.marker.fingerprint if pending.marker else ""
            args += entry_args(entry, data, index, fingerprint, session, claim, pending.shown)
        return ("EVALSHA", APPEND.sha, len(keys), *keys, *args)

    def _settle(
        self,
        table: str,
        batch: list[_Pending],
        chained: _Chained,
        result: tuple[int, Any] | BaseException,
        confirmed: str | None,
        retry: dict[str, list[_Pending]],
        known: Head | None,
    ) -> list[_Pending]:
        """Answer a batch's callers from its script's result; returns what to retry
        (``known``: the table's anchor as the round started)."""
        tips = self.tips
        if isinstance(result, BaseException):
            self._failed(table, batch, result, retry)
            return []
        status, current = result
        if status == STORED:
            self._stored(table, batch, chained, confirmed)
            return []
        if status == FENCED:
            self._attempts.pop(table, None)
            self._losing_since.pop(table, None)
            tips.fence(table, parse_head(current[0]).seq)
            _fail(batch, tips.fence_error(table))
            return []
        if status == ALREADY_DONE:
            # One roll's key is done already: it is not stored; the others re-chain on
            # the same head in the next round.
            # The script wrote the key back, so the round's checks covered its roll.
            index, marker = int(current[0]) - 1, text(current[1])
            pending = batch.pop(index)
            if not pending.future.done():
                pending.future.set_exception(
                    AlreadyRecordedError(marker)
                    if confirmed is None
                    else StoreUnavailableError(confirmed, recorded=None)
                )
            return batch
        if status == CLAIM_REFUSED:
            index, why, nonce = int(current[0]) - 1, text(current[1]), int(current[2])
            seqs = [int(s) for s in current[3:5]] or [0, 0]
            pending = batch.pop(index)
            if not pending.future.done():
                refused = ClaimRefusedError(why, nonce, first_use=seqs[0], chain=seqs[1])
                pending.future.set_exception(refused)
            return batch
        if status == TOKEN_REFUSED:
            index, why = int(current[0]) - 1, text(current[1])
            pending = batch.pop(index)
            if not pending.future.done():
                seed_id = pending.shown.seed_id if pending.shown is not None else ""
                pending.future.set_exception(TokenRefusedError(seed_id, why))
            return batch
        if status == NO_TREE:
            tips.frontiers[table] = None
            return batch
        if status == FULL:
            used, limit = int(current[0]), int(current[1])
            _fail(batch, StoreFullError(_full(used, limit)))
            return []
        # Another writer moved the head: re-chain on the head Redis holds.
        if not tips.learn_tip(table, current, known=known):
            _fail(batch, tips.fence_error(table))
            return []
        attempts = self._attempts[table] = self._attempts.get(table, 0) + 1
        since = self._losing_since.setdefault(table, time.monotonic())
        if attempts >= MAX_ATTEMPTS and time.monotonic() - since >= CONFLICT_SECONDS:
            tips.forget(table)
            self._attempts.pop(table, None)
            self._losing_since.pop(table, None)
            _fail(batch, AppendConflictError(f"table {table!r} is too busy; nothing was recorded"))
            return []
        return batch

    def _stored(
        self, table: str, batch: list[_Pending], chained: _Chained, confirmed: str | None
    ) -> None:
        """The batch is stored: remember the new tip, and answer each roll its receipt (or,
        not confirmed durable in time, that it may have been recorded)."""
        tips = self.tips
        entries = chained.entries
        head = Head(entries[-1].seq, entries[-1].entry_hash)
        tips.remember(table, head, chained.frontier)
        states = tips.key_states.setdefault(table, {})
        if entries[0].certificate is not None:
            states[self.signer.key_id] = "live"
        for pending in batch:
            claim = pending.draft.claim
            if claim is not None and claim.kind == "retire":
                states[claim.key_id] = "retired"
        self._attempts.pop(table, None)
        self._losing_since.pop(table, None)
        self._errors.pop(table, None)
        if confirmed is not None:
            # Stored, but not confirmed on disk (or on enough replicas) in time: not an
            # anchor either, so a failover that loses it does not stop the table.
            _fail(batch, StoreUnavailableError(confirmed, recorded=None))
            return
        tips.anchor(table, head)
        checkpoint, proofs = self._receipts(table, chained)
        for pending, entry, leaf, proof in zip(batch, entries, chained.leaves, proofs, strict=True):
            if not pending.future.done():
                pending.future.set_result(Recorded(entry, leaf, checkpoint, proof))

    def _receipts(
        self, table: str, chained: _Chained
    ) -> tuple[Checkpoint, list[tuple[bytes, ...]]]:
        """The round's checkpoint, signed once for the batch (the script recorded it as the
        table's last signed), and each entry's inclusion proof in its tree, from the hashes
        the round had: the frontier it was chained on and the hashes the batch added. The
        last entry's proof is the frontier before it (``Frontier.next_leaf_proof``): with
        many tables a round's batch is one roll, and nothing else is computed for it."""
        last = chained.entries[-1]
        size = chained.frontier.size
        checkpoint = sign_checkpoint(
            self.signer,
            table,
            size,
            chained.frontier.root(),
            last.entry_hash,
            log_name=self.log_name,
        )
        final = tuple(chained.last.next_leaf_proof())
        if len(chained.entries) == 1:
            return checkpoint, [final]
        known = dict(
            zip(
                (index for _, index in merkle.frontier_indices(chained.start.size)),
                chained.start.hashes,
                strict=True,
            )
        )
        first = chained.before // merkle.HASH_SIZE
        tree = chained.tree
        for offset in range(0, len(tree), merkle.HASH_SIZE):
            known[first + offset // merkle.HASH_SIZE] = tree[offset : offset + merkle.HASH_SIZE]

        def read(indices: Sequence[int]) -> list[bytes]:
            return [known[i] for i in indices]

        start = chained.start.size
        proofs = [
            tuple(merkle.inclusion_proof(start + i, size, read))
            for i in range(len(chained.entries) - 1)
        ]
        return checkpoint, [*proofs, final]

    def _failed(
        self,
        table: str,
        batch: list[_Pending],
        error: BaseException,
        retry: dict[str, list[_Pending]],
    ) -> None:
        """A table's batch met a Redis error. A batch that never reached Redis
        (``NotSentError``: a refused connection, a slot moved) is sent again
        (``CLUSTER_RETRIES`` times): the cluster client re-learns the topology after a
        node fails, and calls to healthy masters caught in that moment should not fail.
        Any other failure (a timeout, a dropped connection) is never sent again (the
        script may have run); it answers 503 and says the roll may have been recorded."""
        self.tips.forget(table)
        self._attempts.pop(table, None)
        self._losing_since.pop(table, None)
        errors = self._errors.get(table, 0)
        if isinstance(error, NotSentError) and errors < CLUSTER_RETRIES:
            self._errors[table] = errors + 1
            retry[table] = batch + retry.get(table, [])
            return
        self._errors.pop(table, None)
        _fail(
            batch,
            StoreUnavailableError(f"audit store unavailable: {error}", recorded=None),
        )

    async def _run_scripts(
        self, calls: list[tuple[Any, ...]]
    ) -> tuple[list[tuple[int, Any] | BaseException], list[str | None]]:
        """Run the compare-and-append script calls, each followed by the durability
        checks on its connection: a result or an error per call, and per call None if
        its round is confirmed durable (else why not).

        Rounds call the script by its SHA-1 (EVALSHA), so its text is not packed once a
        table. A Redis that lost its script cache (a restart, SCRIPT FLUSH) answers
        NOSCRIPT without running anything; the script is loaded and those calls sent
        again."""
        if not calls:
            return [], []
        results, confirmed = await self._send(calls)
        missing = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
        if missing:  # nothing of these ran: load the script, send them again
            try:
                await self.redis.script_load(APPEND.text)
            except RedisError as exc:
                for i in missing:
                    results[i] = exc
            else:
                again, checked = await self._send([calls[i] for i in missing])
                for i, result, why in zip(missing, again, checked, strict=True):
                    results[i] = result
                    confirmed[i] = why
        return [script_result(r) for r in results], confirmed

    async def _send(self, calls: list[tuple[Any, ...]]) -> tuple[list[Any], list[str | None]]:
        """The script calls' raw replies (an error as its exception) and, per call, its
        round's durability confirmation (None: confirmed): one write on one connection
        of a single Redis, or one per node of a cluster, each followed by the checks."""
        if isinstance(self.redis, RedisCluster):
            return await self._send_by_node(self.redis, calls)
        checks = self.durability.confirmations()
        try:
            replies = await send_batch(self.redis, [*calls, *checks.calls])
        except RedisError as exc:  # the connection failed: every batch failed
            self.durability.forget()
            return [exc] * len(calls), [None] * len(calls)
        confirmed = self.durability.verdict(checks, replies[len(calls) :])
        return replies[: len(calls)], [confirmed] * len(calls)

    async def _send_by_node(
        self, redis: RedisCluster, calls: list[tuple[Any, ...]]
    ) -> tuple[list[Any], list[str | None]]:
        """``_send`` on a cluster: the calls of the tables a node holds, then the checks
        (that shard's ``CONFIG GET``s and ``WAIT`` for its replicas), in one write on one
        connection of that node; the nodes concurrently, so a table whose primary is
        down fails alone."""
        groups: dict[str, list[int]] = {}
        for index, call in enumerate(calls):
            try:
                node = redis.get_node_from_key(call[3])
                name = node.name if node is not None else f"?{index}"
            except Exception:  # send_to_node says why, per call
                name = f"?{index}"
            groups.setdefault(name, []).append(index)
        checks = self.durability.confirmations()
        results: list[Any] = [None] * len(calls)
        confirmed: list[str | None] = [None] * len(calls)

        async def send(indices: list[int]) -> None:
            batch = [calls[i] for i in indices]
            try:
                replies = await send_to_node(redis, batch[0][3], [*batch, *checks.calls])
            except RedisError as exc:  # that node alone: the others' rounds stand
                for i in indices:
                    results[i] = exc
                return
            why = self.durability.verdict(checks, replies[len(batch) :])
            for i, reply in zip(indices, replies, strict=False):
                results[i], confirmed[i] = reply, why

        await asyncio.gather(*(send(indices) for indices in groups.values()))
        return results, confirmed


def _full(used: int, limit: int) -> str:
    return (
        f"the audit store holds {used:,} of its {limit:,} bytes (maxmemory): nothing was "
        "recorded. An operator must archive old entries (fairroll archive) or give Redis "
        "more memory"
    )


def _split_repeats(batch: list[_Pending]) -> tuple[list[_Pending], list[_Pending]]:
    """The batch without rolls whose Idempotency-Key an earlier roll of it carries, and
    those rolls."""
    keys: set[str] = set()
    first, later = [], []
    for pending in batch:
        key = pending.marker.key if pending.marker else None
        if key is not None and key in keys:
            later.append(pending)
            continue
        if key is not None:
            keys.add(key)
        first.append(pending)
    return first, later


def _fail(batch: list[_Pending], error: Exception) -> None:
    for pending in batch:
        if not pending.future.done():
            pending.future.set_exception(error)


def _retires(batch: list[_Pending], key_id: str) -> bool:
    return any(
        p.draft.claim is not None
        and p.draft.claim.kind == "retire"
        and p.draft.claim.key_id == key_id
        for p in batch
    )


def _statement(table: str, mechanic: str, request: Any, claim: Claim) -> _Pending:
    """A statement the store appends itself; its future is answered but never awaited."""
    future: asyncio.Future[Recorded] = asyncio.get_running_loop().create_future()
    future.add_done_callback(lambda f: None if f.cancelled() else f.exception())
    draft = Draft.statement(table, mechanic, request, claim)
    return _Pending(draft, future, None, derived=True)
