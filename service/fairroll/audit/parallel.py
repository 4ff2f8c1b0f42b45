"""Verify a log on every core: one pass in order, the independent checks spread out.

What needs the entries in order stays one pass in this process (``verify_run``): the
chain, the hashes, the Merkle tree, keys published and retired, the policy and the seed
sessions. What needs one entry alone (its Ed25519 signature, its dice derived from the
seed and its request replayed) goes to worker processes, ``CHUNK`` entries at a time,
as the lines they were read from (``check_tasks``).

Failures are rare and must be named exactly, so this path only answers "all good": on
any failure (the pass, a worker, or a covering checkpoint that does not verify) the log
is read again by the one serial verifier, the checkpoint kept (its root and head must
match) but no longer standing in for the entries' signatures, and its report (the first
bad seq and why) is the answer.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import AbstractContextManager

from fairroll.audit.verify import (
    Replay,
    Task,
    Trust,
    VerifyReport,
    check_tasks,
    verify_entries,
    verify_run,
)

__all__ = ["CHUNK", "verify_everywhere"]

#: Entries whose independent checks go to a worker together.
CHUNK = 2048

#: Opens the log's lines again, from the start, each time it is called.
Reopen = Callable[[], AbstractContextManager[Iterable[bytes]]]


class _FailedError(Exception):
    """A worker found an entry that fails: stop the pass, the serial verifier says why."""


def verify_everywhere(
    reopen: Reopen, trust: Trust, *, replay: Replay | None = None, workers: int | None = None
) -> VerifyReport:
    """Verify the log ``reopen`` reads with ``workers`` processes besides this one (default:
    one per core; 0 or 1: none, one pass here), and ``trust.covered_by`` standing in for
    the signatures it covers; the verdict is :func:`verify_entries`'s, to the word."""
    count = (os.cpu_count() or 1) if workers is None else workers
    report = _fast(reopen, trust, replay, count)
    if report is not None:
        return report
    with reopen() as lines:
        return verify_entries(lines, trust.without_covering(), replay=replay)


def _fast(reopen: Reopen, trust: Trust, replay: Replay | None, workers: int) -> VerifyReport | None:
    """The report if the fast pass found nothing wrong, else None."""
    if workers <= 1:
        with reopen() as lines:
            report, _ = verify_run(lines, trust, replay=replay)
        return report if report.ok else None
    sink: list[Task] = []
    context = multiprocessing.get_context("fork")  # workers see the systems registered here
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        pending: deque[Future[int | None]] = deque()

        def settle(most: int) -> None:
            while len(pending) > most:
                if pending.popleft().result() is not None:
                    raise _FailedError

        def fed(lines: Iterable[bytes]) -> Iterator[bytes]:
            for line in lines:
                yield line
                if len(sink) >= CHUNK:
                    pending.append(pool.submit(check_tasks, sink[:], replay))
                    sink.clear()
                    settle(2 * workers)  # bounded: the lines in flight, not the log

        try:
            with reopen() as lines:
                report, _ = verify_run(fed(lines), trust, replay=replay, sink=sink)
            if not report.ok:
                return None
            if sink:
                pending.append(pool.submit(check_tasks, sink[:], replay))
            settle(0)
        except _FailedError:
            for future in pending:
                future.cancel()
            return None
    return report
