"""Check a table's log entry by entry and name the first bad seq.

Works on the stored JSON of each entry (an NDJSON export, or the store), so the checks
are the ones any other verifier can make from the bytes alone. For each entry, in order
(``docs/audit.md``, "What a verifier checks", states the same list):

1. the line is one JSON object, with no key twice, holding the entry fields;
2. seq continues the previous entry's (the first full export starts at 1), except for
   the gap an ``audit.epoch`` entry declares;
3. prev_hash is the previous entry's entry_hash (GENESIS_HASH at seq 1), and the table is
   the same (and the one pinned, if any);
4. entry_hash is SHA-256(prev_hash bytes || JCS of the body); the body must have an
   RFC 8785 form (no floats, integers within +-(2**53 - 1));
5. the signature verifies with the public key named by key_id (retired keys: by time);
6. the entry's source and mechanic: a ``drawn`` seed is 64 hex digits and a ``chosen`` or
   ``drawn`` entry's dice re-derive from its seed; the table's policy (``table.policy``,
   seq 1 only) allows chosen seeds and supplied dice; a ``committed`` roll names a
   session committed earlier in the log (``session.commit``), with the same commitment,
   not yet revealed, and the nonce after the session's last one; a ``session.reveal``
   publishes the seed whose SHA-256 is the commitment, counts the session's rolls, and
   then every roll of the session re-derives from (server seed, client seed, nonce);
7. optionally, ``replay`` re-resolves the request from the dice and the outcome must come
   out identical (a committed roll: once its session is revealed);
8. the Merkle tree (``merkle``) grows by the entry's leaf; every kept checkpoint or
   receipt (``anchors``: seq and entry_hash; ``roots``: size and root) must match.

Version 1 entries (``v: 1``) are checked as version 1 wrote them: ``seeded`` for drawn or
chosen, and committed rolls with nonces unique per session, revealed by ``reveals``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from fairroll.audit import merkle
from fairroll.audit.checkpoint import Checkpoint, verify_checkpoint
from fairroll.audit.entry import (
    COMMIT_MECHANIC,
    GENESIS_HASH,
    KEY_RETIRE_MECHANIC,
    POLICY_MECHANIC,
    RENEW_MECHANIC,
    REVEAL_MECHANIC,
    NotCanonicalError,
    canonical,
    canonical_of,
    chain_hash,
    jcs,
    leaf_hash,
)
from fairroll.audit.merkle import Frontier
from fairroll.audit.signing import KeyCertificate, verify_certificate, verify_signature
from fairroll.chain import MAX_LENGTH, previous, steps_to
from fairroll.randomness import MAX_SIDES, commitment_of, committed_seed, derive_face

__all__ = [
    "EPOCH_MECHANIC",
    "SELECTIVE_REFUSAL",
    "WHAT_IT_PROVES",
    "DuplicateKeyError",
    "Replay",
    "SessionState",
    "Task",
    "Trust",
    "VerifiedState",
    "VerifyReport",
    "check_tasks",
    "loads_strict",
    "verify_entries",
    "verify_run",
]

#: A signed entry that opens a new epoch after a loss: ``request`` is ``{lost_after,
#: resume_after, reason}``, its seq is ``resume_after + 1``, and it chains on the entry
#: at ``lost_after``; the seqs between were acknowledged once and are lost for good.
EPOCH_MECHANIC = "audit.epoch"

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

#: Re-resolve an entry from its request and its seed (None: its recorded dice) ->
#: (dice, outcome) as JSON values.
Replay = Callable[[dict[str, Any], str | None], tuple[Any, Any]]
#: An entry's checks that need no other entry: its line (it must be its own RFC 8785
#: text, and its entry_hash that of its body), the public key its signature is checked
#: with (None: not here), and its dice check (``seeded`` with the seed, or ``supplied``;
#: None: none).
Task = tuple[bytes, str | None, tuple[str, str | None] | None]

_REQUIRED = {
    "v": int,
    "table": str,
    "seq": int,
    "time": str,
    "mechanic": str,
    "source": str,
    "dice": list,
    "prev_hash": str,
    "key_id": str,
    "entry_hash": str,
    "signature": str,
}
_SOURCES_V2 = frozenset({"drawn", "chosen", "committed", "supplied", "statement"})
_STATEMENTS = frozenset(
    {
        COMMIT_MECHANIC,
        RENEW_MECHANIC,
        REVEAL_MECHANIC,
        POLICY_MECHANIC,
        EPOCH_MECHANIC,
        KEY_RETIRE_MECHANIC,
    }
)
_HEX = frozenset("0123456789abcdef")


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
    #: The size of the signed checkpoint that stood in for the signatures of the entries
    #: it covers (``Trust.covered_by``): those were not checked one by one.
    covered_through: int | None = None
    #: False: the verification stopped short of the log's head (the server's own,
    #: incremental: ``play.verification``); the report is of the part verified so far.
    complete: bool = True
    #: The server stopped appends to this table (its log went back or was rewritten):
    #: why. The report is of what survives (the server's own verification only).
    stopped: str | None = None


class DuplicateKeyError(ValueError):
    """A JSON object with one key twice: parsers disagree on which value wins."""


def loads_strict(text: bytes | str) -> Any:
    """JSON with no key twice in any object (``DuplicateKeyError``), no NaN or Infinity."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


class _BadEntryError(Exception):
    def __init__(self, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.seq = seq
        self.reason = reason


class _Session:
    __slots__ = (
        "commitment",
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

    def chain(self, commitment: str, length: int, first: int) -> None:
        self.commitment = self.last = commitment
        self.length = length
        self.first_nonce = first


class _Verifier:
    def __init__(
        self,
        keys: Mapping[str, str] | None,
        replay: Replay | None,
        table: str | None,
        reveals: Mapping[str, str],
        windows: Mapping[str, tuple[str | None, str | None]],
        partial: bool,
        root: str | None = None,
    ) -> None:
        self.keys = keys
        self.root = root
        #: Keys published in the log read so far (by a certificate), and where each retired.
        self.published: dict[str, str] = {}
        self.retired: dict[str, int] = {}
        self.replay = replay
        self.table = table
        self.reveals = reveals
        self.windows = windows
        #: The log is not read from seq 1 (a range, or from an archive base): sessions
        #: and a policy may have started before the first entry read.
        self.partial = partial
        self.sessions: dict[str, _Session] = {}
        self.v1_nonces: set[tuple[str, int]] = set()
        self.v1_unrevealed = 0
        self.policy: dict[str, Any] = {}
        self.sources: dict[str, int] = {}
        #: The canonical form of the entry being checked (``check``).
        self._canonical: Callable[[Any], bytes] = jcs
        #: Entries through this seq are covered by a signed checkpoint (``Trust.covered_by``):
        #: their own signatures are not checked one by one.
        self.covered = 0
        #: Where the per-entry work that needs no other entry goes to be done elsewhere
        #: (``parallel``): (line, public key or None, dice check, seed); None: done here.
        self.sink: list[Task] | None = None
        self._raw: bytes | None = None
        self._task_dice: tuple[str, str | None] | None = None

    def check(self, entry: dict[str, Any], prev: dict[str, Any] | None, raw: bytes | None) -> None:
        """Check one entry after ``prev``; ``raw``: the line it was read from, when that is
        its own RFC 8785 text (``entry.canonical_of``): its parts need no slow canonical
        form, and its independent checks may go to ``sink``."""
        seq: int = entry["seq"]
        read_canonical = raw is not None
        self._canonical = canonical if read_canonical else jcs
        self._raw = raw if self.sink is not None else None
        self._task_dice = None
        self._check_link(entry, prev)
        if self._raw is None:
            _check_hash(entry, read_canonical=read_canonical)
        public_key = self._signing_key(entry)
        if public_key is not None and seq <= self.covered:
            public_key = None  # the covering checkpoint's signature holds it
        if public_key is not None and self._raw is None:
            if not verify_signature(public_key, entry["entry_hash"], entry["signature"]):
                raise _BadEntryError(seq, "the signature does not verify")
            public_key = None
        if entry["v"] < 2:
            _check_window(entry, self.windows.get(entry["key_id"]))
        if entry["v"] >= 2:
            self._check_v2(entry)
        else:
            self._check_v1(entry)
        if self._raw is not None:
            self.sink.append((self._raw, public_key, self._task_dice))  # type: ignore[union-attr]

    def _dice(self, entry: dict[str, Any], seed: str | None, kind: str) -> None:
        """The entry's dice derive from ``seed`` and its outcome replays (``kind``:
        ``seeded``, or ``supplied``: its recorded dice); here, or sent to ``sink``."""
        if self._raw is not None:
            self._task_dice = (kind, seed)
            return
        _check_dice(entry, seed, self.replay, self._canonical)

    def _signing_key(self, entry: dict[str, Any]) -> str | None:
        """The public key an entry's signature is checked with (None: not checked).

        Version 2, trust rooted once: a key signs in a table's log only from the entry
        that publishes it there (the first it signs, carrying its ``certificate`` by the
        pinned root), and never after a ``key.retire`` of it. Keys from ``keys`` (GET
        /v1/keys, a convenience) serve version 1 entries, and a log read from the middle
        (a range, an archived table) for keys published before it."""
        seq: int = entry["seq"]
        key_id = entry["key_id"]
        if entry["v"] >= 2:
            if key_id in self.retired:
                raise _BadEntryError(
                    seq,
                    f"signed by key {key_id} after its retirement at seq "
                    f"{self.retired[key_id]} of this log",
                )
            if self.keys is None and self.root is None:
                return None  # signatures are not checked (the report says so)
            if entry.get("certificate") is not None:
                return self._publish(entry, entry["certificate"])
            published = self.published.get(key_id)
            if published is not None:
                return published
            if not self.partial and self.root is not None:
                raise _BadEntryError(
                    seq, f"signed by key {key_id}, which this log did not publish before it"
                )
        if self.keys is None:
            if self.root is not None:
                raise _BadEntryError(seq, f"unknown signing key {key_id!r}")
            return None
        public_key = self.keys.get(key_id)
        if public_key is None:
            raise _BadEntryError(seq, f"unknown signing key {key_id!r}")
        return public_key

    def _publish(self, entry: dict[str, Any], statement: Any) -> str:
        seq: int = entry["seq"]
        try:
            certificate = msgspec.convert(statement, KeyCertificate)
        except msgspec.ValidationError:
            raise _BadEntryError(seq, "the entry's certificate is not a key certificate") from None
        if certificate.key_id != entry["key_id"]:
            raise _BadEntryError(seq, "a certificate publishes the key that signs its entry")
        if not verify_certificate(certificate, self.root):
            who = f"the pinned root {self.root}" if self.root else "its root"
            raise _BadEntryError(
                seq, f"key {certificate.key_id} is not certified by {who}: a key added by hand"
            )
        self.published[certificate.key_id] = certificate.public_key
        return certificate.public_key

    def _check_link(self, entry: dict[str, Any], prev: dict[str, Any] | None) -> None:
        seq: int = entry["seq"]
        if prev is None:
            if seq == 1 and entry["prev_hash"] != GENESIS_HASH:
                raise _BadEntryError(seq, "the first entry does not chain on the genesis hash")
        else:
            if seq != prev["seq"] + 1 and not _declared_gap(entry, prev["seq"]):
                raise _BadEntryError(
                    prev["seq"] + 1, f"seq {prev['seq'] + 1} is missing: found seq {seq}"
                )
            if entry["prev_hash"] != prev["entry_hash"]:
                raise _BadEntryError(
                    seq, "prev_hash does not match the previous entry's entry_hash"
                )
            if entry["table"] != prev["table"]:
                raise _BadEntryError(seq, "the entry belongs to another table")
        if self.table is not None and entry["table"] != self.table:
            raise _BadEntryError(
                seq, f"the entry belongs to table {entry['table']!r}, not {self.table!r}"
            )

    def _check_v2(self, entry: dict[str, Any]) -> None:
        seq: int = entry["seq"]
        source, mechanic = entry["source"], entry["mechanic"]
        if source not in _SOURCES_V2:
            raise _BadEntryError(seq, f"unknown dice source {source!r}")
        if (source == "statement") != (mechanic in _STATEMENTS):
            raise _BadEntryError(seq, f"a {mechanic} entry cannot have source {source!r}")
        if source == "statement":
            if entry["dice"]:
                raise _BadEntryError(seq, "a statement rolls no dice")
            self._statement(entry)
            return
        self.sources[source] = self.sources.get(source, 0) + 1
        if source == "committed":
            self._committed(entry)
            return
        seed = entry.get("seed")
        if source == "supplied":
            if self.policy.get("supplied_dice") is False:
                raise _BadEntryError(seq, "the table's policy refuses supplied dice")
            if seed is not None:
                raise _BadEntryError(seq, "a supplied roll has no seed")
            self._dice(entry, None, "supplied")
            return
        if not isinstance(seed, str) or not seed:
            raise _BadEntryError(seq, f"a {source} entry has no seed")
        if source == "drawn" and (len(seed) != 64 or not set(seed) <= _HEX):
            raise _BadEntryError(seq, "a drawn seed is 64 hex digits: this one was not drawn")
        if source == "drawn" and self.policy.get("drawn_seeds") is False:
            raise _BadEntryError(seq, "the table's policy refuses server-drawn seeds")
        if source == "chosen" and self.policy.get("chosen_seeds") is False:
            raise _BadEntryError(seq, "the table's policy refuses caller-chosen seeds")
        self._dice(entry, seed, "seeded")

    def _statement(self, entry: dict[str, Any]) -> None:
        seq: int = entry["seq"]
        mechanic = entry["mechanic"]
        request = entry.get("request")
        if not isinstance(request, dict):
            raise _BadEntryError(seq, f"a {mechanic} entry has no request object")
        if mechanic == KEY_RETIRE_MECHANIC:
            key_id = request.get("key_id")
            if not isinstance(key_id, str):
                raise _BadEntryError(seq, "a key.retire entry names the key_id it retires")
            self.retired.setdefault(key_id, seq)
        elif mechanic == POLICY_MECHANIC:
            if seq != 1:
                raise _BadEntryError(seq, "a table's policy is its first entry, only")
            self.policy = request
        elif mechanic == COMMIT_MECHANIC:
            seed_id, commitment = request.get("seed_id"), request.get("commitment")
            if not isinstance(seed_id, str) or not isinstance(commitment, str):
                raise _BadEntryError(seq, "a commitment names its seed_id and commitment")
            if seed_id in self.sessions:
                raise _BadEntryError(seq, f"seed session {seed_id} is committed twice")
            session = self.sessions[seed_id] = _Session(commitment, 0)
            if request.get("kind") == "chain":
                length = _chain_length(seq, request)
                if request.get("first_nonce") != 1 or not _is_link(commitment):
                    raise _BadEntryError(seq, "a chain's commitment is a link, from nonce 1")
                session.chain(commitment, length, 1)
        elif mechanic == RENEW_MECHANIC:
            self._renew(seq, request)
        elif mechanic == REVEAL_MECHANIC:
            self._reveal(seq, request)

    def _session_of(self, seq: int, seed_id: str, commitment: str, nonce: int) -> _Session:
        session = self.sessions.get(seed_id)
        if session is None:
            if not self.partial:
                raise _BadEntryError(
                    seq, f"seed session {seed_id} has no commitment earlier in the log"
                )
            # Committed before the first entry read: take it from here.
            session = self.sessions[seed_id] = _Session(commitment, nonce)
        return session

    def _renew(self, seq: int, request: dict[str, Any]) -> None:
        seed_id, commitment = request.get("seed_id"), request.get("commitment")
        first, previous_anchor = request.get("first_nonce"), request.get("previous")
        if not (
            isinstance(seed_id, str)
            and _is_link(commitment)
            and isinstance(first, int)
            and not isinstance(first, bool)
            and isinstance(previous_anchor, str)
        ):
            raise _BadEntryError(seq, "a renewal names seed_id, commitment, first_nonce, previous")
        length = _chain_length(seq, request)
        session = self.sessions.get(seed_id)
        if session is None:
            if not self.partial:
                raise _BadEntryError(
                    seq, f"seed session {seed_id} has no commitment earlier in the log"
                )
            session = self.sessions[seed_id] = _Session(previous_anchor, first - 1)
            session.chain(previous_anchor, length, first - length)
            session.partial = True
        if session.length == 0 or session.revealed:
            raise _BadEntryError(seq, f"seed session {seed_id} is not an open hash chain")
        if previous_anchor != session.commitment:
            raise _BadEntryError(seq, f"the renewal does not follow seed session {seed_id}'s chain")
        used_up = session.partial or session.nonce == session.first_nonce + session.length - 1
        if first != session.nonce + 1 or not used_up:
            raise _BadEntryError(
                seq, f"seed session {seed_id} is renewed before its chain is used up"
            )
        session.chain(str(commitment), length, first)
        session.partial = False

    def _chained(self, seq: int, entry: dict[str, Any], ref: dict[str, Any], s: _Session) -> None:
        """A hash-chain roll: its link hashes to the link revealed before it (or the
        anchor), and its dice derive from it now."""
        link, first, nonce = ref.get("link"), ref.get("first_nonce"), ref["nonce"]
        if not _is_link(link) or first != s.first_nonce:
            raise _BadEntryError(seq, "a hash-chain roll reveals its link and its chain's start")
        if nonce > s.first_nonce + s.length - 1:
            raise _BadEntryError(seq, f"nonce {nonce} is past its chain's {s.length} links")
        if previous(str(link)) != s.last:
            raise _BadEntryError(
                seq, "the revealed link does not hash to the one before: the seed was changed"
            )
        s.last = str(link)
        self._dice(entry, committed_seed(str(link), ref["client_seed"], nonce), "seeded")

    def _committed(self, entry: dict[str, Any]) -> None:
        seq: int = entry["seq"]
        ref = _session_ref(entry)
        seed_id, nonce = ref["seed_id"], ref["nonce"]
        if seed_id not in self.sessions and self.partial and "link" in ref:
            self._chain_from_here(seq, ref)
        session = self._session_of(seq, seed_id, ref["commitment"], nonce - 1)
        if ref["commitment"] != session.commitment:
            raise _BadEntryError(seq, f"the roll's commitment is not seed session {seed_id}'s")
        if session.revealed:
            raise _BadEntryError(seq, f"a roll in seed session {seed_id} after its reveal")
        if nonce <= session.nonce:
            raise _BadEntryError(seq, f"nonce {nonce} of seed session {seed_id} is reused")
        if nonce != session.nonce + 1:
            raise _BadEntryError(
                seq,
                f"nonce {session.nonce + 1} of seed session {seed_id} is missing: found "
                f"nonce {nonce} (a roll was made and left out)",
            )
        if (session.length > 0) != ("link" in ref):
            raise _BadEntryError(
                seq, f"the roll and seed session {seed_id} disagree on whether it is a hash chain"
            )
        if session.length > 0:
            self._chained(seq, entry, ref, session)
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
        if not _is_link(link) or not isinstance(first, int) or not 1 <= first <= nonce:
            raise _BadEntryError(seq, "a hash-chain roll reveals its link and its chain's start")
        if steps_to(str(link), nonce - first + 1) != ref["commitment"]:
            raise _BadEntryError(seq, "the revealed link does not hash to its chain's anchor")
        session = self.sessions[ref["seed_id"]] = _Session(ref["commitment"], nonce - 1)
        # Its length is unknown from here: the most a chain may have, and a renewal is
        # taken wherever the log shows one.
        session.chain(ref["commitment"], MAX_LENGTH, first)
        session.last = previous(str(link))
        session.partial = True

    def _reveal(self, seq: int, request: dict[str, Any]) -> None:
        seed_id, server_seed = request.get("seed_id"), request.get("server_seed")
        rolls, commitment = request.get("rolls"), request.get("commitment")
        if not (
            isinstance(seed_id, str)
            and isinstance(server_seed, str)
            and isinstance(commitment, str)
            and isinstance(rolls, int)
        ):
            raise _BadEntryError(seq, "a reveal names seed_id, commitment, server_seed, rolls")
        session = self._session_of(seq, seed_id, commitment, rolls)
        if session.revealed:
            raise _BadEntryError(seq, f"seed session {seed_id} is revealed twice")
        if session.length and not _is_link(server_seed):
            raise _BadEntryError(seq, "a chain's revealed last link is 64 hex digits")
        if not session.length:
            opens = commitment_of(server_seed)
        elif session.partial:  # the chain's length is not known from here: at most this
            opens = _reaches(server_seed, commitment, MAX_LENGTH)
        else:
            opens = steps_to(server_seed, session.length)
        if commitment != session.commitment or opens != commitment:
            raise _BadEntryError(seq, "the revealed server seed does not match the commitment")
        if rolls != session.nonce:
            raise _BadEntryError(
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
            raise _BadEntryError(seq, "the revealed server seed does not match the commitment")
        ref = entry["session"]
        seed = committed_seed(server_seed, ref["client_seed"], ref["nonce"])
        _check_dice(entry, seed, self.replay, self._canonical)

    def _check_v1(self, entry: dict[str, Any]) -> None:
        seq: int = entry["seq"]
        source = entry["source"]
        if entry["mechanic"] == EPOCH_MECHANIC:
            return
        self.sources[source] = self.sources.get(source, 0) + 1
        seed: str | None = None
        if source == "seeded":
            seed = entry.get("seed")
            if not isinstance(seed, str):
                raise _BadEntryError(seq, "a seeded entry has no seed")
        elif source == "committed":
            ref = _session_ref(entry)
            seed_id, nonce = ref["seed_id"], ref["nonce"]
            # Version 1 appended racing replicas' nonces slightly out of order.
            if nonce < 1 or (seed_id, nonce) in self.v1_nonces:
                raise _BadEntryError(seq, f"nonce {nonce} of seed session {seed_id} is reused")
            self.v1_nonces.add((seed_id, nonce))
            server_seed = self.reveals.get(seed_id)
            if server_seed is None:
                self.v1_unrevealed += 1
                return
            self._check_committed(seq, entry, server_seed, ref["commitment"])
            return
        elif source != "supplied":
            raise _BadEntryError(seq, f"unknown dice source {source!r}")
        _check_dice(entry, seed, self.replay, self._canonical)

    def unrevealed(self) -> int:
        return self.v1_unrevealed + sum(len(s.pending) for s in self.sessions.values())


@dataclass(frozen=True, kw_only=True)
class Trust:
    """What a verification of entries trusts and holds them to, beyond the entries.

    ``keys`` maps key_id to a base64 Ed25519 public key; ``None`` skips the signature
    check (the report says so). ``windows`` maps key_id to its (not_before, not_after):
    an entry signed after its key was retired is bad (``published`` makes both from the
    key list a log serves). ``root``, the pinned root key id (its fingerprint, published
    out of band): version 2 entries are then checked only with keys the log itself
    published under that root. ``table`` pins the table name. ``base`` (seq, entry_hash),
    a signed checkpoint an archived log was trimmed through: the first entry must be seq +
    1 and chain on it; ``base_frontier``, its tree's frontier, lets the Merkle root be
    computed on from it. ``head`` (seq, entry_hash) is where the log must end. ``anchors``
    (seq, entry_hash) and ``roots`` (size, Merkle root) were seen earlier (receipts,
    signed checkpoints): the log must still hold each, or it was rewritten, forked or
    truncated. ``reveals`` maps a seed session to its server seed, for version 1 logs
    (version 2 logs carry their reveals).
    """

    keys: Mapping[str, str] | None
    windows: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    root: str | None = None
    table: str | None = None
    head: tuple[int, str] | None = None
    anchors: Sequence[tuple[int, str]] = ()
    roots: Sequence[tuple[int, bytes]] = ()
    reveals: Mapping[str, str] = field(default_factory=dict)
    base: tuple[int, str] | None = None
    base_frontier: Sequence[bytes] | None = None
    #: A signed checkpoint that stands in for the signatures of the entries it covers
    #: (seq 1 to its size): its root and head must match, and it must verify with a key
    #: the log published (or ``keys`` names) and had not retired; the entries'
    #: signatures are then not checked one by one (one signature instead of one each).
    covered_by: Checkpoint | None = None
    #: The lines may stop before the log's end (one part of it, ``verify_run``'s
    #: ``resume``): kept checkpoints and receipts beyond the last line are checked by the
    #: part that reaches them, not taken for a truncation.
    open_end: bool = False

    @classmethod
    def published(cls, public_keys: Iterable[PublicKeyLike], **rest: Any) -> Trust:
        """Trust in the keys a log's server publishes (``GET /v1/keys``), each within its
        window, and what else ``rest`` names."""
        listed = list(public_keys)
        return cls(
            keys={key.key_id: key.public_key for key in listed},
            windows={key.key_id: (key.not_before, key.not_after) for key in listed},
            **rest,
        )


class PublicKeyLike(Protocol):
    """A published key as ``Trust.published`` reads it (``signing.PublicKey``)."""

    @property
    def key_id(self) -> str: ...
    @property
    def public_key(self) -> str: ...
    @property
    def not_before(self) -> str | None: ...
    @property
    def not_after(self) -> str | None: ...


def verify_entries(
    lines: Iterable[bytes | str], trust: Trust, *, replay: Replay | None = None
) -> VerifyReport:
    """Verify entries given as JSON texts, in log order, under ``trust``; ``replay``
    re-derives each outcome from its dice by the rules (``mechanics.replay_entry``)."""
    return verify_run(lines, trust, replay=replay)[0]


class SessionState(msgspec.Struct, frozen=True, kw_only=True):
    """A seed session as a verification left it (``VerifiedState``)."""

    seed_id: str
    commitment: str
    nonce: int
    revealed: bool
    length: int
    first_nonce: int
    last: str
    partial: bool
    #: Rolls waiting for the session's reveal: (seq, entry).
    pending: list[tuple[int, dict[str, Any]]] = []


class VerifiedState(msgspec.Struct, frozen=True, kw_only=True):
    """Where a verification that found nothing wrong stopped, with all it must know to
    go on from there (``verify_run(resume=...)``): the last entry, the tree's frontier,
    the keys the log published and retired, its policy, the seed sessions and counts."""

    table: str | None
    seq: int
    entry_hash: str
    count: int
    first_seq: int | None
    epochs: int
    partial: bool
    #: The tree's size and frontier (base64), None for a range read without its tree.
    frontier_size: int | None
    frontier: list[str] | None
    published: dict[str, str]
    retired: dict[str, int]
    policy: dict[str, Any]
    sources: dict[str, int]
    sessions: list[SessionState]
    v1_nonces: list[tuple[str, int]]
    v1_unrevealed: int
    #: The seqs epochs declared lost, as (lost_after, resume_after) spans.
    gaps: list[tuple[int, int]] = []


def verify_run(
    lines: Iterable[bytes | str],
    trust: Trust,
    *,
    replay: Replay | None = None,
    resume: VerifiedState | None = None,
    sink: list[Task] | None = None,
) -> tuple[VerifyReport, VerifiedState | None]:
    """:func:`verify_entries`, going on from ``resume`` (the lines then start after its
    seq), and the state to go on from next (None when it failed). With ``sink``, each
    entry's independent checks (its signature, its dice and replay) are appended there
    instead of made: the caller makes them (``check_tasks``), or the verdict is void."""
    run = _Run(trust, replay, resume, sink)
    try:
        for line in lines:
            if line and not line.isspace():
                run.entry(line)
        run.finish()
    except _BadEntryError as bad:
        return run.report(bad), None
    return run.report(None), run.state()


class _Run:
    """One pass over a log: the loop state of ``verify_run``."""

    def __init__(
        self,
        trust: Trust,
        replay: Replay | None,
        resume: VerifiedState | None,
        sink: list[Task] | None,
    ) -> None:
        self.trust = trust
        self.replay = replay
        self.sink = sink
        self.expected = dict(trust.anchors)
        self.expected_roots = dict(trust.roots)
        self.covering = trust.covered_by
        if self.covering is not None:
            self.expected[self.covering.size] = self.covering.head_hash
            self.expected_roots[self.covering.size] = base64.b64decode(self.covering.root_hash)
        self.check: _Verifier | None = None
        self.count = 0
        self.epochs = 0
        self.gaps: list[tuple[int, int]] = []
        self.first_seq: int | None = None
        self.prev: dict[str, Any] | None = None
        self.frontier: Frontier | None = None
        base = trust.base
        if base is None:
            self.frontier = Frontier.empty()
        elif trust.base_frontier is not None:
            self.frontier = Frontier.of(base[0], trust.base_frontier)
        if resume is not None:
            self._resume(resume)

    def _verifier(self, partial: bool) -> _Verifier:
        trust = self.trust
        check = _Verifier(
            trust.keys,
            self.replay,
            trust.table,
            trust.reveals or {},
            trust.windows or {},
            partial=partial,
            root=trust.root,
        )
        check.sink = self.sink
        if self.frontier is None:
            self.covering = None  # no tree to hold its root to: it cannot stand in
        if self.covering is not None:
            check.covered = self.covering.size
        return check

    def _resume(self, state: VerifiedState) -> None:
        self.frontier = (
            Frontier.of(state.frontier_size, [base64.b64decode(h) for h in state.frontier])
            if state.frontier_size is not None and state.frontier is not None
            else None
        )
        check = self.check = self._verifier(state.partial)
        check.published = dict(state.published)
        check.retired = dict(state.retired)
        check.policy = dict(state.policy)
        check.sources = dict(state.sources)
        check.v1_nonces = {(seed_id, nonce) for seed_id, nonce in state.v1_nonces}
        check.v1_unrevealed = state.v1_unrevealed
        for s in state.sessions:
            session = check.sessions[s.seed_id] = _Session(s.commitment, s.nonce)
            session.revealed, session.length, session.first_nonce = (
                s.revealed,
                s.length,
                s.first_nonce,
            )
            session.last, session.partial, session.pending = s.last, s.partial, list(s.pending)
        self.count, self.epochs, self.first_seq = state.count, state.epochs, state.first_seq
        self.gaps = list(state.gaps)
        self.prev = {"seq": state.seq, "entry_hash": state.entry_hash, "table": state.table}

    def entry(self, line: bytes | str) -> None:
        base, prev = self.trust.base, self.prev
        expected_seq = prev["seq"] + 1 if prev else (base[0] + 1 if base else None)
        entry, raw = _parse(line, expected_seq, trusting=self.sink is not None)
        seq: int = entry["seq"]
        if self.check is None:
            self.first_seq = seq
            if base is not None:
                prev = {"seq": base[0], "entry_hash": base[1], "table": entry.get("table")}
            if seq != 1 and base is None:
                self.frontier = None  # a range: its tree starts before it
            self.check = self._verifier(partial=seq != 1)
        self.check.check(entry, prev, raw)
        frontier = self.frontier
        if frontier is not None:
            while frontier.size + 1 < seq:  # the seqs an epoch declared lost
                frontier, _ = frontier.append(merkle.lost_leaf(frontier.size + 1))
            frontier, _ = frontier.append(leaf_hash(raw if raw is not None else jcs(entry)))
            self.frontier = frontier
            want = self.expected_roots.get(seq)
            if want is not None and frontier.root() != want:
                raise _BadEntryError(
                    seq,
                    f"the Merkle root at size {seq} is not the one a kept checkpoint "
                    "signed: rewritten or forked",
                )
        self.epochs += entry["mechanic"] == EPOCH_MECHANIC
        if prev is not None and seq > prev["seq"] + 1:  # a gap an epoch declared
            self.gaps.append((prev["seq"], seq - 1))
        if seq in self.expected and entry["entry_hash"] != self.expected[seq]:
            raise _BadEntryError(
                seq,
                "this entry differs from an earlier checkpoint or receipt: rewritten or forked",
            )
        if self.covering is not None and seq == self.covering.size:
            self._check_covering(seq)
        self.prev = entry
        self.count += 1

    def _check_covering(self, seq: int) -> None:
        """The checkpoint that stood in for its entries' signatures is signed by a key this
        log published (or ``keys`` names) and had not retired; its root and head matched."""
        covering, check = self.covering, self.check
        assert covering is not None and check is not None  # noqa: S101 - entry() sets them
        key_id = covering.key_id
        public_key = check.published.get(key_id) or (self.trust.keys or {}).get(key_id)
        if (
            public_key is None
            or key_id in check.retired
            or not verify_checkpoint(covering, public_key)
        ):
            raise _BadEntryError(
                seq,
                f"the checkpoint of size {seq} that stands in for its entries' signatures "
                f"is not signed by a key this log published ({key_id}): check them one by one",
            )

    def finish(self) -> None:
        base, table, head = self.trust.base, self.trust.table, self.trust.head
        if self.prev is None and base is not None:  # nothing kept beyond the base
            self.prev = {"seq": base[0], "entry_hash": base[1], "table": table}
        if head is not None:
            _check_head(self.prev, head)
        last = self.prev["seq"] if self.prev else 0
        beyond = [seq for seq in [*self.expected, *self.expected_roots] if seq > last]
        if beyond and not self.trust.open_end:
            raise _BadEntryError(
                last + 1,
                f"the log ends at seq {last}, but a checkpoint or receipt saw seq "
                f"{max(beyond)}: truncated",
            )

    def report(self, bad: _BadEntryError | None) -> VerifyReport:
        check, prev, trust = self.check, self.prev, self.trust
        ok = bad is None
        root = self.frontier.root() if self.frontier is not None and bad is None else None
        return VerifyReport(
            ok=ok,
            entries=self.count,
            first_seq=self.first_seq,
            last_seq=prev["seq"] if prev else None,
            head_hash=prev["entry_hash"] if prev else None,
            first_bad_seq=bad.seq if bad else None,
            reason=bad.reason if bad else None,
            signatures_checked=trust.keys is not None or trust.root is not None,
            outcomes_replayed=self.replay is not None,
            unrevealed=check.unrevealed() if check else 0,
            epochs=self.epochs,
            root_hash=base64.b64encode(root).decode() if root is not None else None,
            covered_through=self.covering.size if self.covering is not None and ok else None,
            **_words(check.sources if check else {}),
        )

    def state(self) -> VerifiedState | None:
        check, prev, frontier = self.check, self.prev, self.frontier
        if check is None or prev is None:
            return None
        return VerifiedState(
            table=prev.get("table"),
            seq=prev["seq"],
            entry_hash=prev["entry_hash"],
            count=self.count,
            first_seq=self.first_seq,
            epochs=self.epochs,
            partial=check.partial,
            frontier_size=frontier.size if frontier is not None else None,
            frontier=[base64.b64encode(h).decode() for h in frontier.hashes]
            if frontier is not None
            else None,
            published=dict(check.published),
            retired=dict(check.retired),
            policy=dict(check.policy),
            sources=dict(check.sources),
            sessions=[
                SessionState(
                    seed_id=seed_id,
                    commitment=s.commitment,
                    nonce=s.nonce,
                    revealed=s.revealed,
                    length=s.length,
                    first_nonce=s.first_nonce,
                    last=s.last,
                    partial=s.partial,
                    pending=list(s.pending),
                )
                for seed_id, s in check.sessions.items()
            ],
            v1_nonces=sorted(check.v1_nonces),
            v1_unrevealed=check.v1_unrevealed,
            gaps=list(self.gaps),
        )


def _words(sources: dict[str, int]) -> dict[str, Any]:
    """A report's counts by source with what each proves, in words."""
    return {
        "sources": sources,
        "proves": {source: WHAT_IT_PROVES.get(source, source) for source in sources},
        "refusals": SELECTIVE_REFUSAL if sources.get("committed") else None,
    }


def _parse(
    line: bytes | str, expected_seq: int | None, *, trusting: bool = False
) -> tuple[dict[str, Any], bytes | None]:
    """The entry on ``line``, and the line's bytes if they are its RFC 8785 form (the
    export's way: then its hashes need no slow canonical form), else None. ``trusting``:
    the bytes of any line that decodes, whose form ``check_tasks`` checks elsewhere."""
    raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
    if trusting:
        stripped = raw.rstrip(b"\r\n")
        try:
            value = _TRUSTING.decode(stripped)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
            value = None
        if isinstance(value, dict) and _fields_hold(value, expected_seq):
            return value, stripped
    fast = canonical_of(raw.rstrip(b"\r\n"))
    if isinstance(fast, dict) and _fields_hold(fast, expected_seq):
        return fast, raw.rstrip(b"\r\n")
    try:
        entry = loads_strict(line)
    except DuplicateKeyError as exc:
        raise _BadEntryError(expected_seq or _seq_hint(line), f"not a JSON entry: {exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise _BadEntryError(expected_seq, f"not a JSON entry: {exc}") from None
    except RecursionError:
        raise _BadEntryError(expected_seq, "not a JSON entry: nested too deeply") from None
    if not isinstance(entry, dict):
        raise _BadEntryError(expected_seq, "not a JSON object")
    _fields_hold(entry, expected_seq, strict=True)
    return entry, None


def _fields_hold(entry: dict[str, Any], expected_seq: int | None, *, strict: bool = False) -> bool:
    """Every required field is there with its type; else False, or (``strict``) the
    error naming the first one that is not."""
    seq = entry.get("seq")
    at = seq if isinstance(seq, int) and not isinstance(seq, bool) else expected_seq
    for name, kind in _REQUIRED.items():
        value = entry.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            if not strict:
                return False
            raise _BadEntryError(at, f"field {name!r} is missing or not a {kind.__name__}")
    return True


def _seq_hint(line: bytes | str) -> int | None:
    """The seq an unreadable entry seems to have (to name it), if any."""
    try:
        seq = msgspec.json.decode(line, type=_SeqOnly).seq
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return seq


#: Decodes a line whose form another process checks (``_parse(trusting=True)``).
_TRUSTING = msgspec.json.Decoder()


class _SeqOnly(msgspec.Struct):
    seq: int | None = None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reaches(link: str, anchor: str, most: int) -> str:
    """``anchor`` if ``link`` hashes to it in at most ``most`` steps, else where it got."""
    for _ in range(most):
        link = previous(link)
        if link == anchor:
            break
    return link


def _is_link(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _chain_length(seq: int, request: dict[str, Any]) -> int:
    length = request.get("length")
    if not isinstance(length, int) or isinstance(length, bool) or not 1 <= length <= MAX_LENGTH:
        raise _BadEntryError(seq, f"a chain has 1 to {MAX_LENGTH} links")
    return length


def _session_ref(entry: dict[str, Any]) -> dict[str, Any]:
    session = entry.get("session")
    if not isinstance(session, dict) or not all(
        isinstance(session.get(k), t) and not isinstance(session.get(k), bool)
        for k, t in (("seed_id", str), ("commitment", str), ("client_seed", str), ("nonce", int))
    ):
        raise _BadEntryError(entry["seq"], "a committed entry has no valid session")
    return session


def _declared_gap(entry: dict[str, Any], prev_seq: int) -> bool:
    """An epoch entry declares the seqs after ``prev_seq`` lost: it may follow the gap."""
    request = entry.get("request")
    return (
        entry.get("mechanic") == EPOCH_MECHANIC
        and isinstance(request, dict)
        and request.get("lost_after") == prev_seq
        and request.get("resume_after") == entry["seq"] - 1
        and entry["seq"] > prev_seq
    )


def _check_window(entry: dict[str, Any], window: tuple[str | None, str | None] | None) -> None:
    # Only retirement is enforced: replicas' clocks may run a little behind the one that
    # first published a shared key, so not_before is information, not a bound.
    if window is None or window[1] is None:
        return
    if entry["time"] > window[1]:
        raise _BadEntryError(
            entry["seq"],
            f"signed at {entry['time']}, after key {entry['key_id']} was retired at {window[1]}",
        )


def _check_head(last: dict[str, Any] | None, head: tuple[int, str]) -> None:
    head_seq, head_hash = head
    last_seq = last["seq"] if last else 0
    if last_seq < head_seq:
        raise _BadEntryError(
            last_seq + 1, f"the log ends at seq {last_seq} but its head is seq {head_seq}"
        )
    if last is not None and last_seq == head_seq and last["entry_hash"] != head_hash:
        raise _BadEntryError(last_seq, "the last entry is not the head the store recorded")


def _check_hash(entry: dict[str, Any], *, read_canonical: bool) -> None:
    """entry_hash is SHA-256(prev_hash || the canonical body)."""
    seq: int = entry["seq"]
    body = {name: value for name, value in entry.items() if name not in _UNHASHED}
    try:
        recomputed = chain_hash(entry["prev_hash"], body, read_canonical=read_canonical)
    except NotCanonicalError as exc:
        raise _BadEntryError(seq, f"the entry has no canonical form: {exc}") from None
    except ValueError:
        raise _BadEntryError(seq, "prev_hash is not hex") from None
    if recomputed != entry["entry_hash"]:
        raise _BadEntryError(seq, "entry_hash does not match the entry's content")


def _check_dice(
    entry: dict[str, Any], seed: str | None, replay: Replay | None, same: Callable[[Any], bytes]
) -> None:
    """The entry's dice derive from ``seed`` (None: its dice were supplied) and, with
    ``replay``, its request re-resolved gives its dice and outcome. Replaying derives the
    dice anyway, so each die is derived once; only when they differ does the die-by-die
    check run, to say which die and why."""
    seq: int = entry["seq"]
    if replay is None:
        if seed is not None:
            _check_seeded_dice(seq, seed, entry["dice"])
        return
    try:
        dice, outcome = replay(entry, seed)
    except (ValueError, KeyError, TypeError, msgspec.ValidationError) as exc:
        if seed is not None:
            _check_seeded_dice(seq, seed, entry["dice"])
        raise _BadEntryError(seq, f"the request does not replay: {exc}") from None
    if same(dice) != same(entry["dice"]):
        if seed is not None:
            _check_seeded_dice(seq, seed, entry["dice"])
        raise _BadEntryError(seq, "replaying the request rolls different dice")
    if same(outcome) != same(entry.get("outcome")):
        raise _BadEntryError(seq, "the recorded outcome does not follow from the dice")


def check_tasks(tasks: Sequence[Task], replay: Replay | None) -> int | None:
    """Do the independent checks ``sink`` collected (in another process): the first seq
    that fails one, or None. Where and why it fails, the serial pass says again."""
    for raw, public_key, dice in tasks:
        entry = canonical_of(raw)
        if not isinstance(entry, dict) or not _fields_hold(entry, None):
            return _seq_hint(raw) or 0
        seq: int = entry["seq"]
        try:
            _check_hash(entry, read_canonical=True)
        except _BadEntryError:
            return seq
        if public_key is not None and not verify_signature(
            public_key, entry["entry_hash"], entry["signature"]
        ):
            return seq
        if dice is not None:
            try:
                _check_dice(entry, dice[1], replay, canonical)
            except _BadEntryError:
                return seq
    return None


def _check_seeded_dice(seq: int, seed: str, dice: list[Any]) -> None:
    try:
        key = seed.encode()
    except UnicodeEncodeError:
        raise _BadEntryError(seq, "the seed holds a lone surrogate: not UTF-8") from None
    for position, die in enumerate(dice):
        sides = die.get("sides") if isinstance(die, dict) else None
        face = die.get("face") if isinstance(die, dict) else None
        if not isinstance(sides, int) or not 1 <= sides <= MAX_SIDES:
            raise _BadEntryError(seq, f"die {position} has no valid sides")
        if face != derive_face(key, position, sides):
            raise _BadEntryError(seq, f"die {position} does not derive from the seed")


_UNHASHED = frozenset({"entry_hash", "signature"})
