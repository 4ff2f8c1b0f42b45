"""A table's upkeep: the checkpoints it signs, archival behind a signed base, and epochs
after a loss that no restore can undo. Each is rare beside a roll, and each must keep the
log's promises: no checkpoint inconsistent with the last one signed, no seq issued twice.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import msgspec

from fairroll.audit import merkle
from fairroll.audit.checkpoint import Checkpoint, sign_checkpoint
from fairroll.audit.entry import GENESIS_HASH, Draft, Entry, Head, canonical, leaf_hash, now_rfc3339
from fairroll.audit.keyspace import base_key, head_key, log_key, signed_key, tree_key
from fairroll.audit.merkle import Frontier
from fairroll.audit.redis.append import STORED, append_args, append_keys, entry_args, script_result
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.redis.errors import TableFencedError
from fairroll.audit.redis.scripts import APPEND, ARCHIVE, SIGNED, TRIM_TREE
from fairroll.audit.redis.tips import MAX_ATTEMPTS, Tips, head_value, text
from fairroll.audit.signing import Signer, seal
from fairroll.audit.verify import EPOCH_MECHANIC

if TYPE_CHECKING:
    from fairroll.audit.reader import LogReader

__all__ = ["MAX_EPOCH_GAP", "Maintenance"]

#: The most seqs one epoch may declare lost (each keeps a placeholder leaf).
MAX_EPOCH_GAP = 100_000

_encoder = msgspec.json.Encoder()
_log = logging.getLogger("fairroll.audit")


class Maintenance:
    """Checkpoints, archives and epochs of the tables in ``redis``."""

    def __init__(
        self, redis: AnyRedis, signer: Signer, tips: Tips, reader: LogReader, log_name: str
    ) -> None:
        self.redis = redis
        self.signer = signer
        self.tips = tips
        self.reader = reader
        self.log_name = log_name
        #: Per table, the last checkpoint this process signed or saw recorded.
        self._signed: dict[str, tuple[int, bytes]] = {}

    def genesis(self, table: str) -> Checkpoint:
        """The checkpoint of the empty log (size 0), where an unarchived table starts."""
        return sign_checkpoint(
            self.signer, table, 0, merkle.EMPTY_ROOT, GENESIS_HASH, log_name=self.log_name
        )

    async def checkpoint(self, table: str) -> Checkpoint:
        """The table's current size and Merkle root, signed now: only if it is consistent
        with the last checkpoint signed for the table (by any process), else the table is
        stopped and ``TableFencedError`` says why (fail closed)."""
        head, frontier = await self.tips.tip(table)
        root = frontier.root()
        for _ in range(MAX_ATTEMPTS):
            last = self._signed.get(table)
            recorded = await self.redis.get(signed_key(table))
            plain = text(recorded) if recorded is not None else ""
            if plain:
                size_text, _, root_hex = plain.partition(" ")
                last = (int(size_text), bytes.fromhex(root_hex))
                if last[0] > head.seq:
                    # Every append records its round's checkpoint: one may have landed
                    # between the two reads. The log only grows, so read its tip again
                    # (now after the signed one); only a log still behind it went back.
                    head, frontier = await self.tips.tip(table)
                    root = frontier.root()
            if last is not None:
                await self._check_consistent(table, last, head.seq, root)
            if last == (head.seq, root):
                break
            value = f"{head.seq} {root.hex()}"
            if int(await self.redis.eval(SIGNED.text, 1, signed_key(table), plain, value)):
                break
        self._signed[table] = (head.seq, root)
        return sign_checkpoint(
            self.signer, table, head.seq, root, head.entry_hash, log_name=self.log_name
        )

    async def _check_consistent(
        self, table: str, last: tuple[int, bytes], size: int, root: bytes
    ) -> None:
        old_size, old_root = last
        if size < old_size:
            why = f"it has {size} entries, but a checkpoint of size {old_size} was signed"
        elif size == old_size:
            why = "" if root == old_root else f"its root at size {size} differs from the signed one"
        elif old_size == 0:
            why = ""  # every tree extends the empty one
        else:
            prefix = await self.reader.prove(table, lambda r: merkle.subtree_hash(0, old_size, r))
            ok = prefix == old_root
            why = "" if ok else f"its first {old_size} entries are not the ones signed before"
        if why:
            _log.error("table %r: no checkpoint signed: %s", table, why)
            self.tips.stop(table, old_size, size)
            raise TableFencedError(
                f"table {table!r} is stopped: {why}; a checkpoint now would not be consistent "
                "with the last one signed. An operator must restore the log."
            )

    async def archive(self, table: str, through: int) -> Checkpoint:
        """Trim entries up to seq ``through`` (exported and verified by the caller first),
        keeping a checkpoint signed for that seq, with its tree's frontier, as the log's new
        *base*: the first kept entry chains on its head hash, the tree (kept whole) goes on
        from its frontier, and verifiers start from it. Refused (ValueError) if
        ``through`` is not an entry of the log or not beyond the current base."""
        entry = await self.reader.entry(table, through)
        if entry is None:
            raise ValueError(f"table {table!r} has no entry {through} to archive through")
        await self.tips.tip(table)  # a table from before trees gets its tree while it can
        indices = [i for _, i in merkle.frontier_indices(through)]
        hashes = await self.reader.read_hashes(table, indices)
        frontier = Frontier.of(through, hashes)
        base = sign_checkpoint(
            self.signer,
            table,
            through,
            frontier.root(),
            entry.entry_hash,
            log_name=self.log_name,
            frontier=hashes,
        )
        done = await self.redis.eval(
            ARCHIVE.text,
            2,
            log_key(table),
            base_key(table),
            through,
            entry.entry_hash,
            _encoder.encode(base),
        )
        if not int(done):
            raise ValueError(f"table {table!r} is already archived through seq {through} or later")
        return base

    async def open_epoch(self, table: str, resume_after: int, reason: str) -> Entry:
        """After a loss that no restore can undo: append a signed ``audit.epoch`` entry at
        seq ``resume_after + 1``, chained on the entry Redis still has, declaring the seqs
        between lost (each gets a placeholder leaf in the tree, ``merkle.lost_leaf``).
        ``resume_after`` must be at least the highest seq any server acknowledged (the
        stopped tables' log lines name it), so no seq is issued twice."""
        head, frontier = await self.tips.tip(table)
        if resume_after < head.seq:
            raise ValueError(f"table {table!r} is at seq {head.seq}, past {resume_after}")
        if resume_after - head.seq > MAX_EPOCH_GAP:
            raise ValueError(f"an epoch declares at most {MAX_EPOCH_GAP} seqs lost")
        request: dict[str, Any] = {
            "lost_after": head.seq,
            "resume_after": resume_after,
            "reason": reason,
        }
        # The entry that published this key may be among the lost: the epoch publishes it.
        publish = self.tips.key_states.get(table, {}).get(self.signer.key_id) != "live"
        draft = Draft.statement(
            table, EPOCH_MECHANIC, request, outcome={"lost": resume_after - head.seq}
        )
        entry = seal(
            draft, Head(resume_after, head.entry_hash), self.signer, now_rfc3339(), publish=publish
        )
        before = merkle.stored_count(frontier.size) * merkle.HASH_SIZE
        # A loss may have left tree hashes of the lost seqs: they give way to placeholders.
        await self.redis.eval(
            TRIM_TREE.text, 2, head_key(table), tree_key(table), head_value(head), before
        )
        tree = bytearray()
        for seq in range(head.seq + 1, resume_after + 1):
            frontier, stored = frontier.append(merkle.lost_leaf(seq))
            tree += b"".join(stored)
        data = canonical(entry)
        frontier, stored = frontier.append(leaf_hash(data))
        tree += b"".join(stored)
        args = append_args(
            head,
            entry,
            None,
            ttl=0,
            now_ms=0,
            before=before,
            tree=bytes(tree),
            publishes=self.signer.key_id if publish else "",
            signed=(frontier.size, frontier.root()),
        )
        args += entry_args(entry, data, 0, "", 0, None)
        keys = append_keys(table)
        result = script_result(await self.redis.eval(APPEND.text, len(keys), *keys, *args))
        if isinstance(result, BaseException) or result[0] != STORED:
            raise ValueError(f"table {table!r} moved while the epoch was opened; try again")
        self.tips.forget(table)
        return entry
