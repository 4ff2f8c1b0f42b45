"""Conformance cases of the class "client seeds"."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from fairroll.audit.entry import COMMIT_MECHANIC, Head
from fairroll.chain import HashChain
from fairroll.randomness import commitment_of
from vectors.case import Cases
from vectors.drafts import chain_commit, chain_roll, committed, good_drafts, rolled, statement
from vectors.fixed import DRAWN, SEED_ID, SERVER_SEED, Log
from vectors.logs import build, sealed


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Client seeds: each case of the class, appended to ``made``."""
    case = made.add
    case(
        "client-seed-reused-across-chains",
        "client seeds",
        "the old good log: one client seed on both chains of a session, so the server "
        "knew it when it drew the second chain (not fair, still verifies)",
        [json.loads(msgspec.json.encode(e)) for e in build(("roth-device", "roth-device"))],
        ok=True,
        not_fair=[12],
    )
    third = "7e57ab1e" * 8
    case(
        "client-seed-reused-in-a-new-session",
        "client seeds",
        "a new session whose first roll uses a client seed already in the log",
        [
            *log,
            *sealed(
                [
                    statement(
                        COMMIT_MECHANIC,
                        {"seed_id": "sVectorsSession02", "commitment": commitment_of(third)},
                    ),
                    committed("sVectorsSession02", third, "player-1", 1),
                ],
                Head(12, log[-1]["entry_hash"]),
            ),
        ],
        ok=True,
        not_fair=[14],
    )
    short = (HashChain("1e9a" * 16, 1), HashChain("2e9a" * 16, 1))
    case(
        "client-seed-reused-on-chains-of-one-link",
        "client seeds",
        "a curl player rolling twice with one client seed on chains of length 1",
        sealed(
            [
                rolled("drawn", DRAWN),
                chain_commit("sShortChains0001", short[0]),
                chain_roll("sShortChains0001", short[0], 1, 1, "curl-player"),
                chain_commit("sShortChains0001", short[1], 2, previous=short[0].anchor),
                chain_roll("sShortChains0001", short[1], 2, 2, "curl-player"),
            ]
        ),
        ok=True,
        not_fair=[5],
    )
    pool = (HashChain("9001" * 16, 2), HashChain("9002" * 16, 2))
    case(
        "client-seed-reused-on-a-pre-committed-chain",
        "client seeds",
        "a pre-committed pool: two chains committed before any roll, then a roll on the "
        "second reusing the client seed a roll on the first used (after both commitments, "
        "but the server could pick the chain that grinds it)",
        sealed(
            [
                rolled("drawn", DRAWN),
                chain_commit("sPooledChain0001", pool[0]),
                chain_commit("sPooledChain0002", pool[1]),
                chain_roll("sPooledChain0001", pool[0], 1, 1, "pool-player"),
                chain_roll("sPooledChain0002", pool[1], 1, 1, "pool-player"),
            ]
        ),
        ok=True,
        not_fair=[5],
    )
    drafts = good_drafts()
    drafts[5] = committed(SEED_ID, SERVER_SEED, "player-1", 2)
    case(
        "client-seed-again-in-its-own-session-is-fair",
        "client seeds",
        "a client seed used twice after the session's commitment: fair (the server "
        "committed before it saw the seed)",
        sealed(drafts),
        ok=True,
    )
