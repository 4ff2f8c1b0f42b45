"""The verdict on a log, and what each source of dice proves, in the words every
verifier prints."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "EARLIER_REVISION",
    "SELECTIVE_REFUSAL",
    "WHAT_IT_PROVES",
    "LostRange",
    "NotFair",
    "VerifyReport",
    "words",
]

#: What a roll of each source proves, in words every verifier prints.
WHAT_IT_PROVES = {
    "drawn": "fair if the operator is honest: the server drew the seed after it saw the "
    "request, so a dishonest operator could have drawn again until it liked the dice, "
    "unseen; roll in a seed session to take that power away",
    "chosen": "reproducible, not fair: the caller chose the seed and could have tried "
    "many before this one",
    "committed": "fair: the server committed to its seeds (a hash chain's anchor, or a "
    "server seed's SHA-256) before the player's client seed was known, and the nonces "
    "run without a gap",
    "supplied": "rolled elsewhere: fairroll only adjudicated these dice",
    "seeded": "version 1: drawn or chosen (who chose the seed is not recorded)",
}
#: What a server that refuses rolls can and cannot do, in words every verifier prints
#: beside committed rolls.
SELECTIVE_REFUSAL = (
    "a server can refuse a roll in a seed session, but not change its dice: refused, the "
    "same nonce and client seed give the same dice when it is made; a selective refusal "
    "shows as the same nonce and client seed refused again and again"
)

#: What an entry replayed under an earlier revision of its rules proves, in words.
EARLIER_REVISION = (
    "follows from its dice by an earlier revision of its rules (an older server recorded "
    "it, or a server still resolving the old way: the log does not say which)"
)


class NotFair(msgspec.Struct, frozen=True, kw_only=True):
    """A roll that verifies but is not fair: its seq, and why in words (``why`` begins
    with what happened, e.g. ``client seed reused``)."""

    seq: int
    why: str


class LostRange(msgspec.Struct, frozen=True, kw_only=True):
    """Seqs ``lost_after + 1 .. resume_after``, acknowledged once and declared lost for
    good by the epoch entry at ``epoch_seq``, for its ``reason``."""

    epoch_seq: int
    lost_after: int
    resume_after: int
    reason: str


class VerifyReport(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict on a log: ``ok``, or the first bad seq and why."""

    ok: bool
    entries: int
    first_seq: int | None = None
    last_seq: int | None = None
    head_hash: str | None = None
    first_bad_seq: int | None = None
    reason: str | None = None
    signatures_checked: bool
    outcomes_replayed: bool
    #: Committed rolls whose session is not revealed (yet): their dice are unchecked.
    unrevealed: int = 0
    #: Epoch entries met: each says acknowledged seqs were lost before it.
    epochs: int = 0
    #: The Merkle root (base64) of the tree of ``last_seq`` entries, when the log was
    #: read from seq 1 or from a base with its frontier.
    root_hash: str | None = None
    #: Rolls by source (``drawn``, ``chosen``, ``committed``, ``supplied``; ``seeded``
    #: for version 1): what each proves is ``WHAT_IT_PROVES``.
    sources: dict[str, int] = msgspec.field(default_factory=dict)
    #: For each source in ``sources``, what its rolls prove, in words (and, with
    #: committed rolls, ``refusals``: what a server refusing rolls can and cannot do).
    proves: dict[str, str] = msgspec.field(default_factory=dict)
    refusals: str | None = None
    #: Rolls that verify but are not fair, each with why (``NotFair``): a committed roll
    #: whose client seed the log showed before its chain was committed.
    not_fair: list[NotFair] = msgspec.field(default_factory=list)
    #: Entries that replayed only under an earlier revision of their rules, by mechanic
    #: (``mechanics.RevisionTally``; what they prove: ``EARLIER_REVISION``). Counted by
    #: ``fairroll verify``; the server's verifications leave it empty (an object, never
    #: null, so a generated client reads one type).
    earlier_revisions: dict[str, int] = msgspec.field(default_factory=dict)
    #: Every range of seqs an epoch declared lost, with its reason.
    lost: list[LostRange] = msgspec.field(default_factory=list)
    #: The size of the signed checkpoint that stood in for the signatures of the entries
    #: it covers (``Trust.covered_by``): those were not checked one by one.
    covered_through: int | None = None
    #: False: the verification stopped short of the log's head (the server's own,
    #: incremental: ``play.verification``); the report is of the part verified so far.
    complete: bool = True
    #: The server stopped appends to this table (its log went back or was rewritten):
    #: why. The report is of what survives (the server's own verification only).
    stopped: str | None = None
    #: Sealed rolls (``sealed.roll``) no reveal opened (yet): their seqs. Listed, not bad:
    #: whoever holds a roll's opening may publish it, or never.
    sealed_unrevealed: list[int] = msgspec.field(default_factory=list)
    #: Sealed rolls a ``sealed.reveal`` opened, each checked against its commitment.
    sealed_revealed: int = 0
    #: Reveals of sealed rolls before the part of the log read (a range, an archive
    #: base): not checked here, not bad.
    sealed_unchecked: int = 0


def words(sources: dict[str, int]) -> dict[str, Any]:
    """A report's counts by source with what each proves, in words."""
    return {
        "sources": sources,
        "proves": {source: WHAT_IT_PROVES.get(source, source) for source in sources},
        "refusals": SELECTIVE_REFUSAL if sources.get("committed") else None,
    }
