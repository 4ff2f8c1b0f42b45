"""Seed sessions as the log states them, entry by entry: a session committed before
its rolls, nonces in order without a gap, each hash-chain roll's link hashing to the one
revealed before it, renewals only at a chain's end, reveals that open the commitment; and
which rolls are not fair because the log showed their client seed before their chain was
committed, or on another chain (the server could have ground, or picked, the chain for
it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fairroll.audit.verify.entries import BadEntryError, is_integer
from fairroll.audit.verify.report import NotFair
from fairroll.chain import MAX_LENGTH, is_link, previous, steps_to
from fairroll.randomness import commitment_of, committed_seed

__all__ = ["Session", "Sessions", "chain_of"]

#: Check a roll's dice against a seed: (entry, seed, kind), kind ``seeded``.
DiceCheck = Callable[[dict[str, Any], str | None, str], None]


class Session:
    __slots__ = (
        "commitment",
        "committed_at",
        "first_nonce",
        "last",
        "length",
        "nonce",
        "partial",
        "pending",
        "revealed",
    )

    def __init__(self, commitment: str, nonce: int, *, length: int = 0, first: int = 1) -> None:
        self.commitment = commitment
        self.nonce = nonce
        self.revealed = False
        #: Rolls waiting for the reveal: (seq, entry).
        self.pending: list[tuple[int, dict[str, Any]]] = []
        #: A hash chain (length > 0): its current chain's first nonce and length, and the
        #: link revealed last (the anchor before the chain's first roll).
        self.length = length
        self.first_nonce = first
        self.last = commitment
        #: Met mid-log (a range or an archive): its chain's length is not known.
        self.partial = False
        #: The seq of the entry that committed the current chain (or the session's server
        #: seed); 0: before the first entry read.
        self.committed_at = 0

    def chain(self, commitment: str, length: int, first: int, at: int = 0) -> None:
        self.commitment = self.last = commitment
        self.length = length
        self.first_nonce = first
        self.committed_at = at


class Sessions:
    """Every seed session of a log, as its entries commit, renew, roll in and reveal
    them. ``dice`` checks a roll's dice as soon as its seed is known (a hash-chain roll:
    at once); ``check_now`` those of a commit-reveal roll when its session is revealed.
    ``reveals`` (version 1) gives server seeds the log does not carry."""

    def __init__(
        self,
        *,
        partial: bool,
        reveals: Mapping[str, str],
        dice: DiceCheck,
        check_now: Callable[[dict[str, Any], str], None],
    ) -> None:
        self.partial = partial
        self.reveals = reveals
        self.dice = dice
        self.check_now = check_now
        self.sessions: dict[str, Session] = {}
        self.v1_nonces: set[tuple[str, int]] = set()
        self.v1_unrevealed = 0
        #: Each client seed the log has shown, with the seq it first appeared at.
        self.client_seeds: dict[str, int] = {}
        #: Each client seed's chains (``chain_of``) that a roll used it on, with the seq
        #: of its first roll on each.
        self.client_seed_chains: dict[str, dict[str, int]] = {}
        self.not_fair: list[NotFair] = []

    def commit(self, seq: int, request: dict[str, Any]) -> None:
        seed_id, commitment = request.get("seed_id"), request.get("commitment")
        if not isinstance(seed_id, str) or not isinstance(commitment, str):
            raise BadEntryError(seq, "a commitment names its seed_id and commitment")
        if seed_id in self.sessions:
            raise BadEntryError(seq, f"seed session {seed_id} is committed twice")
        session = self.sessions[seed_id] = Session(commitment, 0)
        session.committed_at = seq
        if request.get("kind") == "chain":
            length = _chain_length(seq, request)
            if not is_integer(request.get("first_nonce"), 1) or not is_link(commitment):
                raise BadEntryError(seq, "a chain's commitment is a link, from nonce 1")
            session.chain(commitment, length, 1, seq)

    def unrevealed(self) -> int:
        return self.v1_unrevealed + sum(len(s.pending) for s in self.sessions.values())

    def _fresh_client_seed(self, seq: int, ref: dict[str, Any], session: Session) -> None:
        """A client seed the log showed before the chain (or server seed) this roll is on
        was committed: the server knew it when it drew that chain, and could have drawn
        again until it liked the dice. A client seed a roll used on another chain: a
        server holding several committed chains (a pool, or a session's next chain) could
        pick the one that grinds a seed it already saw, whatever the log positions. Either
        way the roll verifies; it is not fair."""
        client_seed: str = ref["client_seed"]
        first = self.client_seeds.setdefault(client_seed, seq)
        chain = chain_of(ref["seed_id"], session.commitment)
        chains = self.client_seed_chains.setdefault(client_seed, {})
        elsewhere = min((at for other, at in chains.items() if other != chain), default=0)
        chains.setdefault(chain, seq)
        if session.committed_at and first < session.committed_at:
            why = (
                f"client seed reused: it is in the log at seq {first}, before "
                f"seq {session.committed_at} committed the chain this roll is on, so "
                "the server knew it when it drew that chain and could have ground it"
            )
        elif elsewhere:
            why = (
                f"client seed reused: a roll at seq {elsewhere} used it on another chain, so "
                "a server holding more than one committed chain could pick the chain that "
                "grinds it (a client seed belongs to one chain)"
            )
        else:
            return
        self.not_fair.append(NotFair(seq=seq, why=why))

    def _session_of(self, seq: int, seed_id: str, commitment: str, nonce: int) -> Session:
        session = self.sessions.get(seed_id)
        if session is None:
            if not self.partial:
                raise BadEntryError(
                    seq, f"seed session {seed_id} has no commitment earlier in the log"
                )
            # Committed before the first entry read: take it from here.
            session = self.sessions[seed_id] = Session(commitment, nonce)
        return session

    def renew(self, seq: int, request: dict[str, Any]) -> None:
        seed_id, commitment = request.get("seed_id"), request.get("commitment")
        first, previous_anchor = request.get("first_nonce"), request.get("previous")
        if not (
            isinstance(seed_id, str)
            and is_link(commitment)
            and is_integer(first)
            and isinstance(previous_anchor, str)
        ):
            raise BadEntryError(seq, "a renewal names seed_id, commitment, first_nonce, previous")
        length = _chain_length(seq, request)
        session = self.sessions.get(seed_id)
        if session is None:
            if not self.partial:
                raise BadEntryError(
                    seq, f"seed session {seed_id} has no commitment earlier in the log"
                )
            session = self.sessions[seed_id] = Session(previous_anchor, first - 1)
            session.chain(previous_anchor, length, first - length)
            session.partial = True
        if session.length == 0 or session.revealed:
            raise BadEntryError(seq, f"seed session {seed_id} is not an open hash chain")
        if previous_anchor != session.commitment:
            raise BadEntryError(seq, f"the renewal does not follow seed session {seed_id}'s chain")
        used_up = session.partial or session.nonce == session.first_nonce + session.length - 1
        if first != session.nonce + 1 or not used_up:
            raise BadEntryError(
                seq, f"seed session {seed_id} is renewed before its chain is used up"
            )
        session.chain(str(commitment), length, first, seq)
        session.partial = False

    def _chained(
        self, seq: int, entry: dict[str, Any], ref: dict[str, Any], s: Session, dice: bool
    ) -> None:
        """A hash-chain roll: its link hashes to the link revealed before it (or the
        anchor), and its dice derive from it now (``dice``; a sealed roll's are checked
        at its reveal)."""
        link, first, nonce = ref.get("link"), ref.get("first_nonce"), ref["nonce"]
        if not is_link(link) or not is_integer(first, s.first_nonce):
            raise BadEntryError(seq, "a hash-chain roll reveals its link and its chain's start")
        if nonce > s.first_nonce + s.length - 1:
            raise BadEntryError(seq, f"nonce {nonce} is past its chain's {s.length} links")
        if previous(str(link)) != s.last:
            raise BadEntryError(
                seq, "the revealed link does not hash to the one before: the seed was changed"
            )
        s.last = str(link)
        if dice:
            self.dice(entry, committed_seed(str(link), ref["client_seed"], nonce), "seeded")

    def committed(self, entry: dict[str, Any], *, dice: bool = True) -> None:
        """A committed roll in its session; ``dice=False``: a sealed roll, whose dice are
        its opening's (checked at its reveal)."""
        seq: int = entry["seq"]
        ref = _session_ref(entry)
        seed_id, nonce = ref["seed_id"], ref["nonce"]
        if seed_id not in self.sessions and self.partial and "link" in ref:
            self._chain_from_here(seq, ref)
        session = self._session_of(seq, seed_id, ref["commitment"], nonce - 1)
        if ref["commitment"] != session.commitment:
            raise BadEntryError(seq, f"the roll's commitment is not seed session {seed_id}'s")
        if session.revealed:
            raise BadEntryError(seq, f"a roll in seed session {seed_id} after its reveal")
        if nonce <= session.nonce:
            raise BadEntryError(seq, f"nonce {nonce} of seed session {seed_id} is reused")
        if nonce != session.nonce + 1:
            raise BadEntryError(
                seq,
                f"nonce {session.nonce + 1} of seed session {seed_id} is missing: found "
                f"nonce {nonce} (a roll was made and left out)",
            )
        if (session.length > 0) != ("link" in ref):
            raise BadEntryError(
                seq, f"the roll and seed session {seed_id} disagree on whether it is a hash chain"
            )
        self._fresh_client_seed(seq, ref, session)
        if session.length > 0:
            self._chained(seq, entry, ref, session, dice)
            session.nonce = nonce
            return
        session.nonce = nonce
        server_seed = self.reveals.get(seed_id)
        if server_seed is not None:
            self._check_committed(seq, entry, server_seed, session.commitment)
        else:
            session.pending.append((seq, entry))

    def _chain_from_here(self, seq: int, ref: dict[str, Any]) -> None:
        """A chain committed before the first entry read: its roll's link must hash to the
        anchor in as many steps as it stands from the chain's start; take it from there."""
        link, first, nonce = ref.get("link"), ref.get("first_nonce"), ref["nonce"]
        if not is_link(link) or not is_integer(first) or not 1 <= first <= nonce:
            raise BadEntryError(seq, "a hash-chain roll reveals its link and its chain's start")
        if nonce - first + 1 > MAX_LENGTH:  # else hashing it back could take forever
            raise BadEntryError(seq, f"nonce {nonce} is past its chain's {MAX_LENGTH} links")
        if steps_to(str(link), nonce - first + 1) != ref["commitment"]:
            raise BadEntryError(seq, "the revealed link does not hash to its chain's anchor")
        session = self.sessions[ref["seed_id"]] = Session(ref["commitment"], nonce - 1)
        # Its length is unknown from here: the most a chain may have, and a renewal is
        # taken wherever the log shows one.
        session.chain(ref["commitment"], MAX_LENGTH, first)
        session.last = previous(str(link))
        session.partial = True

    def reveal(self, seq: int, request: dict[str, Any]) -> None:
        seed_id, server_seed = request.get("seed_id"), request.get("server_seed")
        rolls, commitment = request.get("rolls"), request.get("commitment")
        if not (
            isinstance(seed_id, str)
            and isinstance(server_seed, str)
            and isinstance(commitment, str)
            and is_integer(rolls)
        ):
            raise BadEntryError(seq, "a reveal names seed_id, commitment, server_seed, rolls")
        session = self._session_of(seq, seed_id, commitment, rolls)
        if session.revealed:
            raise BadEntryError(seq, f"seed session {seed_id} is revealed twice")
        if session.length and not is_link(server_seed):
            raise BadEntryError(seq, "a chain's revealed last link is 64 hex digits")
        if not session.length:
            opens = commitment_of(server_seed)
        elif session.partial:  # the chain's length is not known from here: at most this
            opens = _reaches(server_seed, commitment, MAX_LENGTH)
        else:
            opens = steps_to(server_seed, session.length)
        if commitment != session.commitment or opens != commitment:
            raise BadEntryError(seq, "the revealed server seed does not match the commitment")
        if rolls != session.nonce:
            raise BadEntryError(
                seq,
                f"seed session {seed_id} is revealed after {rolls} rolls, but the log holds "
                f"{session.nonce}",
            )
        session.revealed = True
        for roll_seq, entry in session.pending:
            self._check_committed(roll_seq, entry, server_seed, commitment)
        session.pending = []

    def _check_committed(
        self, seq: int, entry: dict[str, Any], server_seed: str, commitment: str
    ) -> None:
        if commitment_of(server_seed) != commitment:
            raise BadEntryError(seq, "the revealed server seed does not match the commitment")
        ref = entry["session"]
        seed = committed_seed(server_seed, ref["client_seed"], ref["nonce"])
        self.check_now(entry, seed)

    def committed_v1(self, entry: dict[str, Any]) -> None:
        """A version 1 committed roll: nonces unique per session (racing replicas of
        version 1 appended them slightly out of order), revealed by ``reveals``."""
        seq: int = entry["seq"]
        ref = _session_ref(entry)
        seed_id, nonce = ref["seed_id"], ref["nonce"]
        if nonce < 1 or (seed_id, nonce) in self.v1_nonces:
            raise BadEntryError(seq, f"nonce {nonce} of seed session {seed_id} is reused")
        self.v1_nonces.add((seed_id, nonce))
        server_seed = self.reveals.get(seed_id)
        if server_seed is None:
            self.v1_unrevealed += 1
            return
        self._check_committed(seq, entry, server_seed, ref["commitment"])


def chain_of(seed_id: str, commitment: str) -> str:
    """A chain's name for the client seeds it was rolled with: its session and the
    commitment (anchor) of the chain, unique in a log since every chain's anchor is
    fresh; a commit-reveal session is one chain."""
    return f"{seed_id} {commitment}"


def _reaches(link: str, anchor: str, most: int) -> str:
    """``anchor`` if ``link`` hashes to it in at most ``most`` steps, else where it got."""
    for _ in range(most):
        link = previous(link)
        if link == anchor:
            break
    return link


def _chain_length(seq: int, request: dict[str, Any]) -> int:
    length = request.get("length")
    if not is_integer(length) or not 1 <= length <= MAX_LENGTH:
        raise BadEntryError(seq, f"a chain has 1 to {MAX_LENGTH} links")
    return length


def _session_ref(entry: dict[str, Any]) -> dict[str, Any]:
    session = entry.get("session")
    if not isinstance(session, dict) or not all(
        isinstance(session.get(k), t) and not isinstance(session.get(k), bool)
        for k, t in (("seed_id", str), ("commitment", str), ("client_seed", str), ("nonce", int))
    ):
        raise BadEntryError(entry["seq"], "a committed entry has no valid session")
    return session
