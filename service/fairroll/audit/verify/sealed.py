"""Sealed rolls as the log states them (rows 25-28 of docs/audit.md's checks table): a
``sealed.roll`` is a committed roll in a hash-chain session that holds only a commitment
(no dice, no outcome); a ``sealed.reveal`` opens an earlier one, once, with an opening
whose SHA-256 is the commitment, whose mechanic is the one sealed, whose dice derive from
``link:client_seed:nonce:blind`` of the sealed roll's session and (replaying) whose
outcome is the one the rules give. Sealed rolls never revealed are listed, not bad.

``opening_problem`` is the one check of an opening: the verifier names the reveal's seq
with its reason, the server (``POST .../sealed/{seq}/reveal``) answers 422 naming its
field, before anything is appended."""

from __future__ import annotations

from typing import Any

import msgspec

from fairroll.audit.entry import NotCanonicalError, jcs
from fairroll.audit.sealed import AUDIENCES, is_blind, opening_commitment, sealed_seed
from fairroll.audit.verify.entries import BadEntryError, Replay, check_seeded_dice
from fairroll.chain import is_link

__all__ = ["OPENING_FIELDS", "SealedBook", "SealedRoll", "opening_problem", "sealed_roll_problem"]

#: The fields of an opening, exactly.
OPENING_FIELDS = frozenset({"blind", "mechanic", "request", "dice", "outcome"})
_REQUEST_FIELDS = frozenset({"mechanic", "audience", "commitment"})


class SealedRoll(msgspec.Struct, frozen=True, kw_only=True):
    """A sealed roll not revealed yet: what its reveal is checked against."""

    seq: int
    mechanic: str
    commitment: str
    link: str
    client_seed: str
    nonce: int


def sealed_roll_problem(entry: dict[str, Any]) -> str | None:
    """Why ``entry`` (mechanic ``sealed.roll``) is not a sealed roll (row 25), or None:
    a committed roll in a hash-chain session, no dice, no outcome, and a request of
    exactly ``{mechanic, audience, commitment}``."""
    session = entry.get("session")
    if entry.get("source") != "committed" or not isinstance(session, dict):
        return "a sealed roll rolls in a hash-chain seed session (source committed)"
    if not is_link(session.get("link")):
        return "a sealed roll rolls in a hash-chain seed session: it reveals its link"
    if entry.get("dice") or entry.get("outcome") is not None or entry.get("seed") is not None:
        return "a sealed roll shows no dice, outcome or seed: its commitment hides them"
    request = entry.get("request")
    if (
        not isinstance(request, dict)
        or set(request) != _REQUEST_FIELDS
        or not isinstance(request.get("mechanic"), str)
        or request.get("audience") not in AUDIENCES
        or not is_link(request.get("commitment"))
    ):
        return (
            "a sealed roll's request is exactly {mechanic, audience, commitment}: an "
            "audience of gm, blind or self and a commitment of 64 hex digits"
        )
    return None


def opening_problem(
    roll: SealedRoll, opening: Any, replay: Replay | None, at: int
) -> tuple[str, str] | None:
    """The first thing wrong with ``opening`` as the opening of ``roll`` (row 27): the
    field at fault (``opening``, ``opening.mechanic``, ``opening.dice``,
    ``opening.outcome``, ``opening.request``) and why; None if it opens it. ``at``: the
    seq the reveal has (or would have), for ``replay``."""
    try:
        opens = opening_commitment(opening) == roll.commitment
    except NotCanonicalError as exc:
        return "opening", f"the opening has no canonical form: {exc}"
    if not opens:
        return "opening", f"the opening does not open the commitment of seq {roll.seq}"
    # Only a sealed roll that committed to a malformed opening gets here.
    if not (
        isinstance(opening, dict)
        and set(opening) == OPENING_FIELDS
        and is_blind(opening["blind"])
        and isinstance(opening["request"], dict)
        and isinstance(opening["dice"], list | tuple)
    ):
        return "opening", (
            f"the opening of seq {roll.seq} is not {{blind, mechanic, request, dice, "
            "outcome} with a blind of 64 lowercase hex digits"
        )
    if opening["mechanic"] != roll.mechanic:
        return "opening.mechanic", f"the opening's mechanic is not the one seq {roll.seq} sealed"
    seed = sealed_seed(roll.link, roll.client_seed, roll.nonce, opening["blind"])
    try:
        check_seeded_dice(at, seed, list(opening["dice"]))
    except BadEntryError as bad:
        return "opening.dice", (
            f"the opening of seq {roll.seq}: {bad.reason.replace('the seed', 'its seed')} "
            "(link:client_seed:nonce:blind)"
        )
    if replay is None:
        return None
    replayed = {
        "seq": at,
        "mechanic": opening["mechanic"],
        "request": opening["request"],
        "dice": opening["dice"],
        "outcome": opening["outcome"],
    }
    try:
        dice, outcome = replay(replayed, seed)
    except (ValueError, KeyError, TypeError, msgspec.ValidationError) as exc:
        return "opening.request", f"the opening's request does not replay: {exc}"
    if jcs(dice) != jcs(opening["dice"]):
        return "opening.dice", "replaying the opening's request rolls different dice"
    if jcs(outcome) != jcs(opening["outcome"]):
        return "opening.outcome", (
            f"the opening's outcome is not the one the rules give for its dice (seq {roll.seq})"
        )
    return None


class SealedBook:
    """Every sealed roll of a log, as its entries seal and reveal them. ``start``: the
    first seq read (a reveal of a roll before it cannot be checked here: counted
    ``unchecked``, not bad)."""

    def __init__(self, start: int = 1) -> None:
        self.start = start
        self.open: dict[int, SealedRoll] = {}
        self.revealed: set[int] = set()
        self.unchecked = 0

    def sealed(self, entry: dict[str, Any]) -> None:
        """A ``sealed.roll`` whose session checks held: kept until its reveal."""
        seq: int = entry["seq"]
        request, session = entry["request"], entry["session"]
        self.open[seq] = SealedRoll(
            seq=seq,
            mechanic=request["mechanic"],
            commitment=request["commitment"],
            link=session["link"],
            client_seed=session["client_seed"],
            nonce=session["nonce"],
        )

    def reveal(self, seq: int, request: dict[str, Any], replay: Replay | None) -> None:
        """A ``sealed.reveal`` at ``seq``: it opens an earlier sealed roll of this log, once."""
        target = request.get("seq")
        if (
            set(request) != {"seq", "opening"}
            or not isinstance(target, int)
            or isinstance(target, bool)
        ):
            raise BadEntryError(seq, "a sealed.reveal names the seq it reveals and its opening")
        # Before the part of the log read (a range, an archive base): seqs start at 1, so
        # a reveal of seq 0 or below reveals nothing, wherever the log is read from.
        if 0 < target < self.start:
            self.unchecked += 1
            return
        if target in self.revealed:
            raise BadEntryError(seq, f"the sealed roll at seq {target} is revealed twice")
        roll = self.open.get(target)
        if roll is None or target >= seq:
            raise BadEntryError(
                seq,
                f"the reveal at seq {seq} reveals no sealed roll: seq {target} is not a "
                "sealed.roll earlier in this log",
            )
        problem = opening_problem(roll, request["opening"], replay, seq)
        if problem is not None:
            raise BadEntryError(seq, problem[1])
        del self.open[target]
        self.revealed.add(target)

    def unrevealed(self) -> list[int]:
        return sorted(self.open)
