"""Findings of the differential fuzzer made again by hand from its corpus, so that every
run (CI's twenty seconds included) asks every verifier about them, whatever the seed
draws (tests/test_differential_fuzz.py puts them in its first batch).

A finding a core still has is tolerated by name in ``KNOWN_DISAGREEMENTS``, and its
pinned case is what keeps that entry honest: once every verifier agrees on it, the
fuzzer fails until the entry is dropped. A pinned case may also hold a verdict the
rules fix (``expect_ok``), such as the one limit docs/audit.md grants an operator over
sealed rolls.
"""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

from fairroll.audit.sealed import opening_commitment
from fuzz_corpus import Corpus
from fuzz_mutations import Case, rebased, resigned
from fuzz_statements import rederive_opening

__all__ = ["pinned"]

Entry = dict[str, Any]


def pinned(corpus: Corpus) -> list[tuple[Case, bool | None]]:
    """The pinned cases, each with the library's verdict it must give (None: any)."""
    return [
        (_late_check(corpus), False),
        (_own_blind(corpus), True),
        *((_chain_start_true(corpus, kind), False) for kind in ("session.commit", "roll")),
        (_float_seq(corpus), False),
        (_empty_frontier(corpus), None),
    ]


def _late_check(corpus: Corpus) -> Case:
    """A commit-reveal roll whose die does not derive (found when its session's reveal
    is read), and a later drawn roll whose die does not derive either: the first bad
    seq is the commit-reveal roll's, as the reveal names it before the later roll is
    read (found as two client seeds swapped across a sealed roll)."""
    log = copy.deepcopy(corpus.logs["main"][0])
    reveal = next(i for i, e in enumerate(log) if e["mechanic"] == "session.reveal")
    seed_id = log[reveal]["request"]["seed_id"]
    roll = next(i for i, e in enumerate(log) if (e["session"] or {}).get("seed_id") == seed_id)
    later = next(i for i, e in enumerate(log) if i > reveal and e["source"] == "drawn")
    for at in (roll, later):
        die = log[at]["dice"][0]
        die["face"] = die["face"] % die["sides"] + 1
    return Case(
        mutation="pinned-late-check",
        detail=f"main: seq {log[roll]['seq']} and seq {log[later]['seq']} a die edited",
        log=resigned(log, roll, None),
    )


def _chain_start_true(corpus: Corpus, kind: str) -> Case:
    """A hash-chain's start (``first_nonce``) of JSON ``true``, in its ``session.commit``
    or in a roll of it: no integer, though Python's ``True == 1`` (the Python core took it
    for 1 and passed the log, verify.js refused it)."""
    log = copy.deepcopy(corpus.logs["main"][0])
    at = next(
        i
        for i, e in enumerate(log)
        if (e["mechanic"] == kind and e["request"].get("kind") == "chain")
        or (kind == "roll" and (e["session"] or {}).get("first_nonce") == 1)
    )
    fields = log[at]["request"] if kind == "session.commit" else log[at]["session"]
    fields["first_nonce"] = True
    return Case(
        mutation="pinned-chain-start-true",
        detail=f"main: seq {log[at]['seq']} ({log[at]['mechanic']}) first_nonce: true",
        log=resigned(log, at, None),
    )


def _float_seq(corpus: Corpus) -> Case:
    """An entry whose seq has a fraction: no integer, so the entry is bad at the seq
    expected there."""
    log = copy.deepcopy(corpus.logs["main"][0])
    log[4]["seq"] += 0.5
    return Case(
        mutation="pinned-float-seq",
        detail=f"main: seq {log[4]['seq']} at index 4",
        log=resigned(log, 4, None),
    )


def _empty_frontier(corpus: Corpus) -> Case:
    """The open table archived through seq 4 (a frontier of one hash), its base's
    frontier an empty list, re-signed (the frontier is not in the signed note)."""
    log, base = rebased(corpus, _Size(4))
    base["frontier"] = []
    return Case(
        mutation="pinned-empty-frontier", detail="open: base of 4, frontier []", log=log, base=base
    )


class _Size(random.Random):
    """A ``random.Random`` whose ``randrange`` answers one size (``rebased``'s draw)."""

    def __init__(self, size: int) -> None:
        super().__init__(0)
        self.size = size

    def randrange(self, *_: Any, **__: Any) -> int:
        return self.size


def _own_blind(corpus: Corpus) -> Case:
    """The operator's own blind (docs/audit.md, "Sealed rolls": "an operator can append
    a sealed roll in a player's session at its next nonce with a blind of its own"): the
    revealed roll's opening given another blind and the dice it derives, its commitment
    re-made, the log re-signed. Only the player's client can tell; the log verifies."""
    log = copy.deepcopy(corpus.logs["main"][0])
    reveal = next(e for e in log if e["mechanic"] == "sealed.reveal")
    opening = reveal["request"]["opening"]
    roll = next(i for i, e in enumerate(log) if e["seq"] == reveal["request"]["seq"])
    opening["blind"] = hashlib.sha256(b"the operator's own blind").hexdigest()
    assert rederive_opening(log[roll], opening)
    log[roll]["request"]["commitment"] = opening_commitment(opening)
    return Case(
        mutation="pinned-own-blind",
        detail=f"main: seq {log[roll]['seq']} sealed with the operator's blind",
        log=resigned(log, roll, None),
    )
