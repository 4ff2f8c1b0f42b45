"""Conformance cases of the class "epochs and archives"."""

from __future__ import annotations

import base64
from typing import Any

from fairroll.audit.entry import Head
from vectors.case import Cases
from vectors.drafts import good_drafts, rolled, statement
from vectors.fixed import EPOCH_MECHANIC, Log
from vectors.logs import checkpoint_of, frontier_of, rechained, sealed, sixes


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Epochs and archives: each case of the class, appended to ``made``."""
    case = made.add
    head3 = sealed(good_drafts()[:3])
    epoch = statement(
        EPOCH_MECHANIC, {"lost_after": 3, "resume_after": 6, "reason": "a Redis failover"}
    )
    after = sealed([epoch, rolled("drawn", "55" * 32)], Head(6, head3[-1]["entry_hash"]))
    lost = {4, 5, 6}
    case(
        "epoch-declares-a-lost-range",
        "epochs and archives",
        "seqs 4..6 declared lost by an epoch (nothing wrong)",
        [*head3, *after],
        ok=True,
    )
    wrong_gap = sealed([epoch, rolled("drawn", "55" * 32)], Head(7, head3[-1]["entry_hash"]))
    case(
        "epoch-gap-not-the-declared-one",
        "epochs and archives",
        "an epoch at a seq that is not the end of the range it declares lost",
        [*head3, *wrong_gap],
        seq=4,
        reason="seq 4 is missing",
    )
    original = sealed(good_drafts()[:6])
    kept = checkpoint_of(original, 5)
    forged_epoch = sixes([*head3, *after], 2)
    forged_epoch = rechained(forged_epoch, 2)
    forged_epoch[2]["signature"] = base64.b64encode(bytes(64)).decode()
    hidden = case(
        "forgery-behind-a-lost-range",
        "epochs and archives",
        "a kept checkpoint of a size inside a declared-lost range, and a forged "
        "signature at seq 3 before it",
        forged_epoch,
        seq=3,
        reason="signature",
        needs=["ed25519"],
    )
    hidden.json_file("since", kept, 1)
    del lost
    base = checkpoint_of(log, 5, frontier=frontier_of(log, 5))
    archived = case(
        "archive-base-and-the-rest",
        "epochs and archives",
        "an archived log: its base at seq 5 and entries 6..12 (nothing wrong)",
        log[5:],
        ok=True,
    )
    archived.json_file("base", base)
    unchained = case(
        "archive-base-does-not-chain",
        "epochs and archives",
        "entries 6..12 given with a base whose head is not seq 5's entry",
        log[5:],
        seq=6,
        reason="prev_hash",
    )
    unchained.json_file("base", checkpoint_of(log, 5, frontier=frontier_of(log, 5), head="ee" * 32))
