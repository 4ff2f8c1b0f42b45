"""One entry checked after the one before it, as the log stands so far: its link,
its hash, its signature under the keys the log published, its source and the table's
policy, and each statement (keys retired, the policy, seed sessions)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fairroll.audit.entry import (
    COMMIT_MECHANIC,
    GENESIS_HASH,
    KEY_RETIRE_MECHANIC,
    POLICY_MECHANIC,
    RENEW_MECHANIC,
    REVEAL_MECHANIC,
    canonical,
    jcs,
)
from fairroll.audit.sealed import SEALED_REVEAL_MECHANIC, SEALED_ROLL_MECHANIC
from fairroll.audit.signing import verify_signature
from fairroll.audit.verify.entries import (
    EPOCH_MECHANIC,
    BadEntryError,
    Replay,
    Task,
    check_dice,
    check_hash,
    check_window,
    declared_gap,
)
from fairroll.audit.verify.sealed import SealedBook, sealed_roll_problem
from fairroll.audit.verify.sessions import Sessions
from fairroll.audit.verify.trust import KeyRing
from fairroll.chain import is_link

__all__ = ["EntryChecker"]

_SOURCES_V2 = frozenset({"drawn", "chosen", "committed", "supplied", "statement"})
_STATEMENTS = frozenset(
    {
        COMMIT_MECHANIC,
        RENEW_MECHANIC,
        REVEAL_MECHANIC,
        POLICY_MECHANIC,
        EPOCH_MECHANIC,
        KEY_RETIRE_MECHANIC,
        SEALED_REVEAL_MECHANIC,
    }
)


class EntryChecker:
    """The checks of each entry that need the entries before it (``check``), with the
    state they keep: ``keys`` (``KeyRing``), ``sessions`` (``Sessions``), the table's
    ``policy``, the rolls counted by source. ``sink``: where each entry's independent
    checks go to be made elsewhere (``parallel``); None: made here."""

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
        self.keys = KeyRing(keys, root, partial=partial)
        self.replay = replay
        self.table = table
        self.windows = windows
        #: The log is not read from seq 1 (a range, or from an archive base): sessions
        #: and a policy may have started before the first entry read.
        self.partial = partial
        self.sessions = Sessions(
            partial=partial, reveals=reveals, dice=self._dice, check_now=self._dice_now
        )
        #: Sealed rolls and their reveals (``start``: set by the run, the first seq read).
        self.sealed = SealedBook()
        self.policy: dict[str, Any] = {}
        self.sources: dict[str, int] = {}
        #: The canonical form of the entry being checked (``check``).
        self._canonical: Callable[[Any], bytes] = jcs
        #: Entries through this seq are covered by a signed checkpoint (``Trust.covered_by``):
        #: their own signatures are not checked one by one.
        self.covered = 0
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
            check_hash(entry, read_canonical=read_canonical)
        public_key = self.keys.signing_key(entry)
        if public_key is not None and seq <= self.covered:
            public_key = None  # the covering checkpoint's signature holds it
        if public_key is not None and self._raw is None:
            if not verify_signature(public_key, entry["entry_hash"], entry["signature"]):
                raise BadEntryError(seq, "the signature does not verify")
            public_key = None
        if entry["v"] < 2:
            check_window(entry, self.windows.get(entry["key_id"]))
        if entry["v"] >= 2:
            self._check_v2(entry)
        else:
            self._check_v1(entry)
        if self._raw is not None:
            self.sink.append((self._raw, public_key, self._task_dice))  # type: ignore[union-attr]

    def _check_link(self, entry: dict[str, Any], prev: dict[str, Any] | None) -> None:
        seq: int = entry["seq"]
        if prev is None:
            if seq == 1 and entry["prev_hash"] != GENESIS_HASH:
                raise BadEntryError(seq, "the first entry does not chain on the genesis hash")
        else:
            if seq != prev["seq"] + 1 and not declared_gap(entry, prev["seq"]):
                raise BadEntryError(
                    prev["seq"] + 1, f"seq {prev['seq'] + 1} is missing: found seq {seq}"
                )
            if entry["prev_hash"] != prev["entry_hash"]:
                raise BadEntryError(seq, "prev_hash does not match the previous entry's entry_hash")
            if entry["table"] != prev["table"]:
                raise BadEntryError(seq, "the entry belongs to another table")
            # (A base or a resumed state stands in for the previous entry without one.)
            if entry["v"] < prev.get("v", entry["v"]):
                # A version-1 entry is checked by the rules of version 1 (a key list, no
                # policy, no seed provenance): one slipped in later would escape them.
                raise BadEntryError(
                    seq,
                    f"the entry's version {entry['v']} is below the previous entry's "
                    f"{prev['v']}: a log's version never goes down",
                )
        if self.table is not None and entry["table"] != self.table:
            raise BadEntryError(
                seq, f"the entry belongs to table {entry['table']!r}, not {self.table!r}"
            )

    def _check_v2(self, entry: dict[str, Any]) -> None:
        seq: int = entry["seq"]
        source, mechanic = entry["source"], entry["mechanic"]
        if source not in _SOURCES_V2:
            raise BadEntryError(seq, f"unknown dice source {source!r}")
        if (source == "statement") != (mechanic in _STATEMENTS):
            raise BadEntryError(seq, f"a {mechanic} entry cannot have source {source!r}")
        if source == "statement":
            if entry["dice"]:
                raise BadEntryError(seq, "a statement rolls no dice")
            self._statement(entry)
            return
        if mechanic == SEALED_ROLL_MECHANIC:
            problem = sealed_roll_problem(entry)
            if problem is not None:
                raise BadEntryError(seq, problem)
        self.sources[source] = self.sources.get(source, 0) + 1
        if mechanic == SEALED_ROLL_MECHANIC:
            self.sessions.committed(entry, dice=False)
            self.sealed.sealed(entry)
            return
        if source == "committed":
            self.sessions.committed(entry)
            return
        seed = entry.get("seed")
        if source == "supplied":
            if self.policy.get("supplied_dice") is False:
                raise BadEntryError(seq, "the table's policy refuses supplied dice")
            if seed is not None:
                raise BadEntryError(seq, "a supplied roll has no seed")
            self._dice(entry, None, "supplied")
            return
        if not isinstance(seed, str) or not seed:
            raise BadEntryError(seq, f"a {source} entry has no seed")
        if source == "drawn" and not is_link(seed):
            raise BadEntryError(seq, "a drawn seed is 64 hex digits: this one was not drawn")
        if source == "drawn" and self.policy.get("drawn_seeds") is False:
            raise BadEntryError(seq, "the table's policy refuses server-drawn seeds")
        if source == "chosen" and self.policy.get("chosen_seeds") is False:
            raise BadEntryError(seq, "the table's policy refuses caller-chosen seeds")
        self._dice(entry, seed, "seeded")

    def _statement(self, entry: dict[str, Any]) -> None:
        seq: int = entry["seq"]
        mechanic = entry["mechanic"]
        request = entry.get("request")
        if not isinstance(request, dict):
            raise BadEntryError(seq, f"a {mechanic} entry has no request object")
        if mechanic == KEY_RETIRE_MECHANIC:
            key_id = request.get("key_id")
            if not isinstance(key_id, str):
                raise BadEntryError(seq, "a key.retire entry names the key_id it retires")
            self.keys.retire(key_id, seq)
        elif mechanic == POLICY_MECHANIC:
            if seq != 1:
                raise BadEntryError(seq, "a table's policy is its first entry, only")
            self.policy = request
        elif mechanic == COMMIT_MECHANIC:
            self.sessions.commit(seq, request)
        elif mechanic == RENEW_MECHANIC:
            self.sessions.renew(seq, request)
        elif mechanic == REVEAL_MECHANIC:
            self.sessions.reveal(seq, request)
        elif mechanic == SEALED_REVEAL_MECHANIC:
            self.sealed.reveal(seq, request, self.replay)

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
                raise BadEntryError(seq, "a seeded entry has no seed")
        elif source == "committed":
            self.sessions.committed_v1(entry)
            return
        elif source != "supplied":
            raise BadEntryError(seq, f"unknown dice source {source!r}")
        check_dice(entry, seed, self.replay, self._canonical)

    def _dice(self, entry: dict[str, Any], seed: str | None, kind: str) -> None:
        """The entry's dice derive from ``seed`` and its outcome replays (``kind``:
        ``seeded``, or ``supplied``: its recorded dice); here, or sent to ``sink``."""
        if self._raw is not None:
            self._task_dice = (kind, seed)
            return
        check_dice(entry, seed, self.replay, self._canonical)

    def _dice_now(self, entry: dict[str, Any], seed: str) -> None:
        check_dice(entry, seed, self.replay, self._canonical)
