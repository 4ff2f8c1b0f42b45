"""Conformance cases of the class "chains"."""

from __future__ import annotations

import copy
from typing import Any

from fairroll.chain import HashChain
from vectors.case import Cases
from vectors.drafts import chain_commit, chain_roll, committed, good_drafts, rolled
from vectors.fixed import CHAIN_ID, CHAIN_LASTS, CLIENT_SEEDS, DRAWN, Log
from vectors.logs import rechained, sealed


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Chains: each case of the class, appended to ``made``."""
    case = made.add
    first, second = (HashChain(last, 2) for last in CHAIN_LASTS)
    ground = copy.deepcopy(log)
    ground[9]["session"]["link"] = "ab" * 32
    case(
        "chain-link-ground",
        "chains",
        "a chain roll's link replaced by the operator's own (dice re-derived, re-signed)",
        rechained(ground, 9),
        seq=10,
        reason="does not hash",
    )
    far = copy.deepcopy(log)
    far[9]["session"]["nonce"] = 2**53 - 1
    case(
        "chain-nonce-far-past-any-chain",
        "chains",
        "a chain roll at the largest integer nonce (re-signed): a verifier that hashed its link "
        "back to the anchor, one step a nonce, would never answer",
        rechained(far, 9),
        seq=10,
        reason="is missing",
    )
    other = HashChain("0ff1" * 16, 2)
    drafts = good_drafts()
    drafts[9] = committed(
        CHAIN_ID,
        "",
        CLIENT_SEEDS[0],
        2,
        link=other.link(2),
        anchor=first.anchor,
        first_nonce=1,
    )
    case(
        "chain-link-from-another-chain",
        "chains",
        "a chain roll revealing a link of another chain (dice re-derived from it)",
        sealed(drafts),
        seq=10,
        reason="does not hash",
    )
    drafts = good_drafts()
    early = [
        *drafts[:9],
        chain_commit(CHAIN_ID, second, 2, previous=first.anchor),
        chain_roll(CHAIN_ID, second, 2, 2, CLIENT_SEEDS[1]),
    ]
    case(
        "chain-renewed-early",
        "chains",
        "a renewal before the chain is used up (the operator drops a chain's last link)",
        sealed(early),
        seq=10,
        reason="renew",
    )
    past = [*drafts[:10], chain_roll(CHAIN_ID, HashChain(CHAIN_LASTS[0], 3), 1, 3, "x")]
    past[-1] = committed(
        CHAIN_ID,
        "",
        CLIENT_SEEDS[0],
        3,
        link=HashChain(CHAIN_LASTS[0], 3).link(1),
        anchor=first.anchor,
        first_nonce=1,
    )
    case(
        "chain-roll-past-its-end",
        "chains",
        "a roll at a nonce past its chain's end, without a renewal",
        sealed(past),
        seq=11,
        reason="chain",
    )
    wrong_previous = copy.deepcopy(log)
    wrong_previous[10]["request"]["previous"] = "cd" * 32
    case(
        "chain-renewal-not-of-its-anchor",
        "chains",
        "a renewal whose previous anchor is not the session's",
        rechained(wrong_previous, 10),
        seq=11,
        reason="does not follow",
    )
    wrong_start = copy.deepcopy(log)
    wrong_start[11]["session"]["first_nonce"] = 1
    case(
        "chain-first-nonce-not-its-chains",
        "chains",
        "a roll on the renewed chain claiming the first chain's first nonce",
        rechained(wrong_start, 11),
        seq=12,
        reason="its chain's start",
    )
    case(
        "chain-session-never-committed",
        "chains",
        "a committed roll in a session no entry committed",
        sealed([rolled("drawn", DRAWN), chain_roll("sNeverCommitted01", first, 1, 1, "c")]),
        seq=2,
        reason="no commitment earlier",
    )
