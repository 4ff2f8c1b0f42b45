"""The server's own verification of a table (``GET /v1/tables/{table}/verification``),
incremental: it goes on from where the last one stopped, so a log of any length is
verified within one request's time, a part at a time.

Each verification reads the entries after the kept state (``audit.redis.verified``:
signed by this server's key) a page at a time, through the same verifier as every
other (``verify_run``), until the log's head or until ``budget`` seconds have gone;
then it keeps the state it reached. At the head, the answer is the verifier's report
of the whole log (the head checked as the store recorded it); stopped short, the
report of the part verified so far, marked incomplete (``complete: false``): ask
again to go on. Entries that no longer chain on the kept state (an epoch replaced a
lost tail, or the log was rewritten) drop the state, and the log is verified from the
start: the state is a head start, never a reason to believe anything.

The log must also hold the tree of the last checkpoint this server signed (every
round's, every ``GET .../checkpoint``'s): a head moved back behind it, or another tree
at its size, is named. A stopped table (``TableFencedError``: its log went back) is
verified as far as its log survives, and the report says it is stopped.

This is the operator's check of its own store: a player verifies offline, trusting
nothing the server says (``docs/audit.md``).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import time
from collections.abc import Iterator

import msgspec

from fairroll.audit import AuditStore, Trust, VerifyReport, merkle, verify_checkpoint
from fairroll.audit.entry import Head
from fairroll.audit.merkle import Frontier
from fairroll.audit.sessions import SeedSessions
from fairroll.audit.verify import VerifiedState, verify_run
from fairroll.mechanics import replay_entry

__all__ = ["MOVED_BACK", "verify_table"]

MOVED_BACK = "its head moved back (entries were deleted)"


async def verify_table(
    store: AuditStore, sessions: SeedSessions, table: str, budget: float, *, full: bool = False
) -> VerifyReport:
    """Verify ``table`` on from its kept state (``full``: from the start) for at most
    about ``budget`` seconds."""
    deadline = time.monotonic() + budget
    head, stopped = await store.read_head(table)
    report = await _verify(store, sessions, table, head, deadline, full=full)
    if stopped is not None:
        return msgspec.structs.replace(report, stopped=stopped.args[0])
    if report.first_bad_seq == head.seq + 1 and MOVED_BACK in (report.reason or ""):
        # Every process's append refuses a table behind its last signed checkpoint.
        why = f"table {table!r} is stopped: {report.reason}; nothing can be appended"
        return msgspec.structs.replace(report, stopped=why)
    return report


async def _verify(
    store: AuditStore,
    sessions: SeedSessions,
    table: str,
    head: Head,
    deadline: float,
    *,
    full: bool,
) -> VerifyReport:
    signed = await store.last_signed(table)
    if signed is not None and signed[0] > head.seq:
        return VerifyReport(
            ok=False,
            entries=0,
            last_seq=head.seq,
            first_bad_seq=head.seq + 1,
            reason=f"the log ends at seq {head.seq}, but this server signed a checkpoint of "
            f"size {signed[0]}: {MOVED_BACK}",
            signatures_checked=True,
            outcomes_replayed=False,
        )
    base = await store.base(table)
    published = Trust.rooted(await store.public_keys(), store.root_key_id)
    keys = published.keys or {}
    if base is not None and not verify_checkpoint(base, keys.get(base.key_id, "")):
        return VerifyReport(
            ok=False,
            entries=0,
            first_bad_seq=base.size + 1,
            reason="the archive base is not signed by a published key",
            signatures_checked=True,
            outcomes_replayed=False,
        )
    trust = dataclasses.replace(
        published,
        table=table,
        reveals=await _reveals(store, sessions, table, head.seq),
        base=(base.size, base.head_hash) if base is not None else None,
        base_frontier=[base64.b64decode(h) for h in base.frontier]
        if base is not None and base.frontier is not None
        else None,
        root=store.root_key_id,
        # The log must still hold the tree this server last signed a checkpoint of.
        roots=[signed] if signed is not None and signed[0] else [],
        open_end=True,  # a part at a time: the head is checked once it is reached
    )
    kept = None if full else await store.verified.load(table)
    if kept is not None and not await _still_holds(store, table, head.seq, kept):
        kept = None  # start over: the verifier says what is wrong, if anything
    report, state, complete = await _run(store, table, head.seq, trust, kept, deadline)
    if not report.ok and kept is not None and report.first_bad_seq == kept.seq + 1:
        # The log does not go on from the kept state: verify it from the start. (A fault
        # further on is the log's, and is answered as it is, every time.)
        await store.verified.drop(table)
        report, state, complete = await _run(store, table, head.seq, trust, None, deadline)
    if report.ok and complete and state is not None and kept is not None:
        held, now = await store.log_length(table)
        held -= max(0, now - head.seq)  # rolls appended since this verification began
        if held != _entries_needed(state, head.seq, base.size if base is not None else 0):
            # Entries the kept state vouched for are gone from the log (deleted under
            # their chain and tree): verify the log from the start to name the first.
            await store.verified.drop(table)
            report, state, complete = await _run(store, table, head.seq, trust, None, deadline)
    if state is not None:
        await store.verified.keep(table, state)
    if not report.ok:
        return report
    if not complete:
        return msgspec.structs.replace(report, complete=False)
    # At the head: the report of the whole log, with the head the store recorded.
    whole = dataclasses.replace(trust, head=(head.seq, head.entry_hash), open_end=False)
    final, _ = verify_run([], whole, replay=replay_entry, resume=state)
    return final


def _entries_needed(state: VerifiedState, head: int, base: int) -> int:
    """The entries a log whose seqs run base + 1 .. head holds, but for those epochs
    declared lost."""
    lost = sum(max(0, until - max(after, base)) for after, until in state.gaps)
    return head - base - lost


async def _still_holds(store: AuditStore, table: str, head: int, kept: VerifiedState) -> bool:
    """The log still holds the entry the kept state ended on, and its tree at that size
    is the tree the state verified."""
    if kept.seq > head:
        return False
    entry = await store.entry(table, kept.seq)
    if entry is None or entry.entry_hash != kept.entry_hash:
        return False
    if kept.frontier is None or kept.frontier_size != kept.seq:
        return True
    indices = [index for _, index in merkle.frontier_indices(kept.seq)]
    try:
        stored = Frontier.of(kept.seq, await store.read_hashes(table, indices))
    except ValueError:
        return False
    verified = Frontier.of(kept.seq, [base64.b64decode(h) for h in kept.frontier])
    return stored.root() == verified.root()


async def _run(
    store: AuditStore,
    table: str,
    until: int,
    trust: Trust,
    kept: VerifiedState | None,
    deadline: float,
) -> tuple[VerifyReport, VerifiedState | None, bool]:
    """Verify from ``kept`` (None: from the start) in a thread fed page by page from this
    loop, until seq ``until`` or the deadline: (report, state reached, at ``until``)."""
    loop = asyncio.get_running_loop()
    reached = [kept.seq if kept is not None else 0]
    start = reached[0]

    def lines() -> Iterator[bytes]:
        while reached[0] < until:
            fetch = store.raw_page(table, after=reached[0], until=until)
            page = asyncio.run_coroutine_threadsafe(fetch, loop).result()
            if not page:
                reached[0] = until  # the log ends early: the head check says so
                return
            for seq, raw in page:
                # Each part verifies at least one entry, however late it started (a
                # loaded server may spend its budget before the first): parts go on.
                if reached[0] > start and time.monotonic() >= deadline:
                    return
                yield raw
                reached[0] = seq

    report, state = await asyncio.to_thread(
        verify_run, lines(), trust, replay=replay_entry, resume=kept
    )
    return report, state, reached[0] >= until


async def _reveals(
    store: AuditStore, sessions: SeedSessions, table: str, until: int
) -> dict[str, str]:
    """The revealed server seeds of the version 1 sessions the log's committed rolls
    name (version 2 logs carry their reveals: their first entry ends the scan)."""
    seed_ids: set[str] = set()
    after, version_1 = 0, True
    while version_1 and (page := await store.raw_page(table, after=after, until=until)):
        found, version_1 = _seed_ids([raw for _, raw in page])
        seed_ids |= found
        after = page[-1][0]
    reveals = {}
    for seed_id in sorted(seed_ids):
        status = await sessions.status(table, seed_id)
        if status.server_seed is not None:
            reveals[seed_id] = status.server_seed
    return reveals


def _seed_ids(lines: list[bytes]) -> tuple[set[str], bool]:
    """Seed sessions named by version 1 committed entries (malformed entries are the
    verifier's to flag), and whether the log may hold more version 1 entries after
    these: a version 2 entry ends them, so a version 2 log is not read twice."""
    found: set[str] = set()
    for line in lines:
        try:
            entry = msgspec.json.decode(line, type=_Committed)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if entry.v >= 2:
            return found, False
        if entry.session is not None:
            found.add(entry.session.seed_id)
    return found, True


class _SessionId(msgspec.Struct):
    seed_id: str


class _Committed(msgspec.Struct):
    v: int = 1
    session: _SessionId | None = None
