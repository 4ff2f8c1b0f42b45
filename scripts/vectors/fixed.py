"""The vectors' fixed inputs: the keys (public on purpose, never deployed), the table,
the time, the seeds and the names every builder shares, so the files come out byte for
byte the same each time."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

#: Where the vectors are written: docs/vectors/ of this checkout.
OUT = Path(__file__).resolve().parents[2] / "docs" / "vectors"

#: The vector key: a 32-byte Ed25519 seed, public here on purpose. Never deploy it.
VECTOR_KEY = base64.b64encode(b"fairroll audit vectors key 00001").decode()

TABLE = "vectors"

TIME = "2026-12-01T00:00:00.000Z"

DRAWN = "6fc8e2f6f33f369a144f83c10ade9c8d3a8096bc2038012a4e064e700abd6403"

SERVER_SEED = "a3f1c0de" * 8

SEED_ID = "sVectorsSession01"

#: The hash-chain session: two chains of two links, from these last links.
CHAIN_ID = "sVectorsChain0001"

CHAIN_LASTS = ("c4a1" * 16, "5eed" * 16)

#: Roth's client seed for each chain: a new one per chain (docs/audit.md, "Seed sessions").
CLIENT_SEEDS = ("roth-device-chain-1", "roth-device-chain-2")

#: The rounds of the receipts' vector: the last seq of each (one note signed per round).
ROUNDS = (5, 12)

#: The vector cosigner: a player's 32-byte Ed25519 seed, public on purpose, and a time.
COSIGNER_KEY = b"fairroll cosignature vectors 001"

COSIGNER = "player-vectors"

COSIGNED_AT = 1_796_083_200

#: The vector witness: its 32-byte Ed25519 seed, public on purpose, and its clock.
WITNESS_KEY = b"fairroll witness vectors key 001"

WITNESS = "witness.vectors.example"

#: Outsiders' keys, public on purpose: an attacker's root, a key it certifies, a key the
#: served keys list with no certificate, and the rotated key the vector root certifies.
ATTACKER_KEY = b"fairroll vectors attacker root 1"

ATTACKER_SIGNING_KEY = b"fairroll vectors attacker key 01"

OUTSIDER_KEY = b"fairroll vectors outsider key 01"

ROTATED_KEY = b"fairroll vectors rotated key 001"

OTHER_COSIGNER_KEY = b"fairroll vectors other cosigner1"

Log = list[dict[str, Any]]

#: An operator's statement that a range of seqs was lost (docs/audit.md, "How appends
#: stay one chain").
EPOCH_MECHANIC = "audit.epoch"
