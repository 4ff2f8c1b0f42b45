"""Every conformance case, class by class (issue 38's attacks and the checks table of
docs/audit.md): one module per class, each appending its cases in index.json's order."""

from __future__ import annotations

from typing import Any

from vectors.case import Case, Cases
from vectors.cases import (
    chains,
    checkpoints,
    client_seeds,
    cosignatures,
    deletions,
    duplicates,
    entries,
    epochs,
    keys,
    nonces,
    notes,
    receipts,
    sealed,
    sources,
)
from vectors.fixed import Log

__all__ = ["cases"]


def cases(log: Log, signer: Any, checkpoint: Any) -> list[Case]:
    """Every conformance case, in the order index.json lists them."""
    made = Cases()
    sources.add(made, log, signer, checkpoint)
    chains.add(made, log, signer, checkpoint)
    client_seeds.add(made, log, signer, checkpoint)
    nonces.add(made, log, signer, checkpoint)
    entries.add(made, log, signer, checkpoint)
    duplicates.add(made, log, signer, checkpoint)
    deletions.add(made, log, signer, checkpoint)
    checkpoints.add(made, log, signer, checkpoint)
    keys.add(made, log, signer, checkpoint)
    epochs.add(made, log, signer, checkpoint)
    sealed.add(made, log, signer, checkpoint)
    made += receipts.receipt_cases(log, signer)
    made += notes.note_cases(log, signer)
    made += cosignatures.cosignature_cases(checkpoint.text)
    return made
