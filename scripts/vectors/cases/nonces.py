"""Conformance cases of the class "nonces and seed sessions"."""

from __future__ import annotations

from typing import Any

from fairroll.audit.entry import Session
from fairroll.randomness import SuppliedDice, commitment_of
from vectors.case import Cases
from vectors.drafts import committed, good_drafts, reveal, roll_draft, varied
from vectors.fixed import SEED_ID, SERVER_SEED, Log
from vectors.logs import rechained, sealed


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Nonces and seed sessions: each case of the class, appended to ``made``."""
    case = made.add
    skipped = [e for e in log if (e.get("session") or {}).get("nonce") != 1 or e["seq"] > 7]
    skipped = [
        {**e, "request": {**e["request"], "rolls": 1}} if e["seq"] == 7 else e for e in skipped
    ]
    case(
        "nonce-skipped",
        "nonces",
        "a committed roll the operator disliked dropped, the rest re-signed",
        rechained(skipped, 4, renumber=True),
        seq=5,
        reason="nonce 1 of seed session",
    )
    drafts = good_drafts()
    drafts[5] = committed(SEED_ID, SERVER_SEED, "gm", 1)
    case(
        "nonce-reused",
        "nonces",
        "two rolls of one session at one nonce",
        sealed(drafts),
        seq=6,
        reason="reused",
    )
    drafts = good_drafts()
    drafts[4], drafts[5] = (
        committed(SEED_ID, SERVER_SEED, "player-1", 2),
        committed(SEED_ID, SERVER_SEED, "gm", 1),
    )
    case(
        "nonce-moved",
        "nonces",
        "a roll answered at the next nonce, the nonce asked for moved after it",
        sealed(drafts),
        seq=5,
        reason="nonce 1 of seed session",
    )
    case(
        "roll-after-reveal",
        "nonces",
        "a committed roll after its session's reveal (the server seed known)",
        sealed([*good_drafts()[:7], committed(SEED_ID, SERVER_SEED, "late", 3)]),
        seq=8,
        reason="reveal",
    )
    case(
        "reveal-of-another-seed",
        "nonces",
        "a reveal whose server seed is not the committed one",
        sealed(varied(6, reveal(SEED_ID, "b0" * 32, 2, commitment_of(SERVER_SEED)))),
        seq=7,
        reason="does not match the commitment",
    )
    case(
        "reveal-miscounts-its-rolls",
        "nonces",
        "a reveal stating fewer rolls than the session made",
        sealed(varied(6, reveal(SEED_ID, SERVER_SEED, 1))),
        seq=7,
        reason="rolls",
    )
    wrong_die = good_drafts()
    wrong_die[4] = roll_draft(
        SuppliedDice({"a": [6] * 7, "b": [1] * 4}),
        "committed",
        session=Session(
            seed_id=SEED_ID, commitment=commitment_of(SERVER_SEED), client_seed="player-1", nonce=1
        ),
    )
    case(
        "committed-die-not-derived",
        "nonces",
        "a committed roll's dice chosen by the operator: caught at the reveal, named at "
        "the roll's seq",
        sealed(wrong_die),
        seq=5,
        reason="does not derive",
    )
