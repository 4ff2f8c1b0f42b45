"""Conformance cases of the class "checkpoints"."""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from vectors.case import Cases
from vectors.fixed import OUTSIDER_KEY, Log
from vectors.logs import checkpoint_of, keys_of, rechained, signer_of, sixes


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Checkpoints: each case of the class, appended to ``made``."""
    case = made.add
    good = case(
        "checkpoint-kept-and-matching",
        "checkpoints",
        "the good log and its checkpoint (nothing wrong)",
        log,
        ok=True,
    )
    good.json_file("checkpoints", msgspec.to_builtins(checkpoint), 1)
    good = case(
        "checkpoint-kept-since",
        "checkpoints",
        "the good log grown from a checkpoint kept at size 5",
        log,
        ok=True,
    )
    good.json_file("since", checkpoint_of(log, 5), 1)
    two = case(
        "two-checkpoints-of-one-size",
        "checkpoints",
        "two checkpoints of size 12 with different roots, both signed by the log's key",
        log,
        seq=12,
        reason="kept checkpoint",
    )
    two.json_file("checkpoints", checkpoint_of(log, 12, root=b"\x07" * 32), 1)
    two.json_file("checkpoints", msgspec.to_builtins(checkpoint), 2)
    outsider = signer_of(OUTSIDER_KEY)
    forged = rechained(sixes(log, 2), 2)
    for entry in forged:
        entry["signature"] = base64.b64encode(bytes(64)).decode()
    stand_in = case(
        "checkpoint-by-an-unpublished-key",
        "checkpoints",
        "a forged log (signatures zeroed) with a checkpoint signed by a key only the "
        "keys file names, standing in for every entry's signature",
        forged,
        seq=1,
        reason="signature",
        needs=["ed25519"],
    )
    stand_in.json_file("keys", keys_of(signer, outsider, certified=False))
    stand_in.json_file("checkpoints", checkpoint_of(forged, 12, outsider), 1)
