"""Conformance cases of the class "deletions, forks, truncations"."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from vectors.case import Cases
from vectors.drafts import committed, good_drafts, rolled
from vectors.fixed import SEED_ID, SERVER_SEED, TABLE, Log
from vectors.logs import rechained, sealed


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Deletions, forks, truncations: each case of the class, appended to ``made``."""
    case = made.add
    case(
        "deleted-entry",
        "deletions",
        "an entry deleted from the middle",
        [*log[:2], *log[3:]],
        seq=3,
        reason="seq 3 is missing",
    )
    fork = sealed([*good_drafts()[:4], committed(SEED_ID, SERVER_SEED, "player-1", 1)])
    forked = sealed([*good_drafts()[:4], rolled("drawn", "11" * 32)])
    case(
        "fork-two-entries-at-one-seq",
        "forks",
        "two entries at seq 5, each chained on seq 4",
        [*fork, forked[4], *log[5:]],
        seq=6,
        reason="seq",
    )
    rewritten = copy.deepcopy(log)
    rewritten[7]["request"]["player"] = "Someone else"
    split = case(
        "fork-against-kept-checkpoint",
        "forks",
        "a log rewritten after seq 8 and re-signed, against the checkpoint kept of the "
        "original (a split view)",
        rechained(rewritten, 7),
        seq=12,
        reason="root",
    )
    split.json_file("checkpoints", msgspec.to_builtins(checkpoint), 1)
    cut = case(
        "truncated-against-kept-checkpoint",
        "truncations",
        "the log's last two entries cut, against the checkpoint kept at size 12",
        log[:10],
        seq=11,
        reason="truncated",
    )
    cut.json_file("checkpoints", msgspec.to_builtins(checkpoint), 1)
    kept_receipt = {"seq": 12, "entry_hash": log[11]["entry_hash"], "table": TABLE}
    cut = case(
        "truncated-against-kept-receipt",
        "truncations",
        "the log's last entry cut, against the receipt kept of it",
        log[:11],
        seq=12,
        reason="truncated",
    )
    cut.json_file("receipts", kept_receipt, 1)
