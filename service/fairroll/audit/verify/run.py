"""One pass over a log (``verify_run``): entries read in order, the Merkle tree grown
by each, kept checkpoints and receipts held to, a checkpoint standing in for the
signatures it covers, and the state to go on from next time (``VerifiedState``)."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

import msgspec

from fairroll.audit import merkle
from fairroll.audit.checkpoint import verify_checkpoint
from fairroll.audit.entry import jcs, leaf_hash
from fairroll.audit.merkle import Frontier
from fairroll.audit.verify.checks import EntryChecker
from fairroll.audit.verify.entries import (
    EPOCH_MECHANIC,
    BadEntryError,
    Replay,
    Task,
    check_head,
    parse,
)
from fairroll.audit.verify.report import LostRange, NotFair, VerifyReport, words
from fairroll.audit.verify.sealed import SealedBook, SealedRoll
from fairroll.audit.verify.sessions import Session
from fairroll.audit.verify.trust import Trust

__all__ = ["SessionState", "VerifiedState", "verify_entries", "verify_run"]


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
    #: The seq of the entry that committed its current chain (0: not read).
    committed_at: int = 0


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
    #: Each client seed the log showed, with the seq it first appeared at.
    client_seeds: dict[str, int] = {}
    #: Each client seed's chains a roll used it on, with the seq of its first roll there.
    #: Required: a state kept before the rule "a client seed belongs to one chain" does
    #: not decode, so verification starts over instead of missing a reuse.
    client_seed_chains: dict[str, dict[str, int]]
    #: Rolls that verified but are not fair: (seq, why).
    not_fair: list[tuple[int, str]] = []
    #: The ranges epochs declared lost: (epoch seq, lost_after, resume_after, reason).
    lost: list[tuple[int, int, int, str]] = []
    #: Sealed rolls not revealed yet, with what their reveal is checked against, the
    #: seqs of those revealed, and the reveals of rolls before the part read. Required:
    #: a state kept before sealed rolls does not decode, so verification starts over
    #: instead of refusing a reveal of a roll it read before.
    sealed_open: list[SealedRoll]
    sealed_revealed: list[int]
    sealed_unchecked: int


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
    instead of made: the caller makes them (``check_tasks``), or the verdict is void.

    A checkpoint standing in for signatures (``Trust.covered_by``) only ever says "all
    good": on any failure the lines are read again with every signature checked, so the
    first bad seq is the log's own whatever checkpoint was offered (``parallel`` does the
    same for the work it sends away)."""
    if trust.covered_by is None or sink is not None:
        return _verify_once(lines, trust, replay, resume, sink)
    kept = list(lines)
    report, state = _verify_once(kept, trust, replay, resume, sink)
    if report.ok:
        return report, state
    return _verify_once(kept, trust.without_covering(), replay, resume, sink)


def _verify_once(
    lines: Iterable[bytes | str],
    trust: Trust,
    replay: Replay | None,
    resume: VerifiedState | None,
    sink: list[Task] | None,
) -> tuple[VerifyReport, VerifiedState | None]:
    run = _Run(trust, replay, resume, sink)
    try:
        run.equivocation()
        for line in lines:
            if line and not line.isspace():
                run.entry(line)
        run.finish()
    except BadEntryError as bad:
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
        self.check: EntryChecker | None = None
        self.count = 0
        self.epochs = 0
        self.gaps: list[tuple[int, int]] = []
        self.lost: list[LostRange] = []
        self.first_seq: int | None = None
        self.prev: dict[str, Any] | None = None
        self.frontier: Frontier | None = None
        base = trust.base
        #: Why the archive base cannot be built on (its frontier does not fit its size):
        #: the first entry after it is named bad with these words.
        self.base_problem: str | None = None
        if base is None:
            self.frontier = Frontier.empty()
        elif trust.base_frontier is not None:
            try:
                self.frontier = Frontier.of(base[0], trust.base_frontier)
            except ValueError as exc:
                self.base_problem = f"the archive base's frontier does not fit its size: {exc}"
        if resume is not None:
            self._resume(resume)

    def _verifier(self, partial: bool) -> EntryChecker:
        trust = self.trust
        check = EntryChecker(
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
        check.keys.published = dict(state.published)
        check.keys.retired = dict(state.retired)
        check.policy = dict(state.policy)
        check.sources = dict(state.sources)
        book = check.sessions
        book.v1_nonces = {(seed_id, nonce) for seed_id, nonce in state.v1_nonces}
        book.v1_unrevealed = state.v1_unrevealed
        book.client_seeds = dict(state.client_seeds)
        book.client_seed_chains = {c: dict(at) for c, at in state.client_seed_chains.items()}
        book.not_fair = [NotFair(seq=seq, why=why) for seq, why in state.not_fair]
        for s in state.sessions:
            session = book.sessions[s.seed_id] = Session(s.commitment, s.nonce)
            session.revealed, session.length, session.first_nonce = (
                s.revealed,
                s.length,
                s.first_nonce,
            )
            session.last, session.partial, session.pending = s.last, s.partial, list(s.pending)
            session.committed_at = s.committed_at
        self.count, self.epochs, self.first_seq = state.count, state.epochs, state.first_seq
        check.sealed = SealedBook(state.first_seq or 1)
        check.sealed.open = {roll.seq: roll for roll in state.sealed_open}
        check.sealed.revealed = set(state.sealed_revealed)
        check.sealed.unchecked = state.sealed_unchecked
        self.gaps = list(state.gaps)
        self.lost = [
            LostRange(epoch_seq=e, lost_after=a, resume_after=r, reason=why)
            for e, a, r, why in state.lost
        ]
        self.prev = {"seq": state.seq, "entry_hash": state.entry_hash, "table": state.table}

    def entry(self, line: bytes | str) -> None:
        base, prev = self.trust.base, self.prev
        expected_seq = prev["seq"] + 1 if prev else (base[0] + 1 if base else None)
        if self.base_problem is not None and base is not None:
            raise BadEntryError(base[0] + 1, self.base_problem)
        entry, raw = parse(line, expected_seq, trusting=self.sink is not None)
        seq: int = entry["seq"]
        if self.check is None:
            self.first_seq = seq
            if base is not None:
                prev = {"seq": base[0], "entry_hash": base[1], "table": entry.get("table")}
            if seq != 1 and base is None:
                self.frontier = None  # a range: its tree starts before it
            self.check = self._verifier(partial=seq != 1)
            self.check.sealed.start = seq
        self.check.check(entry, prev, raw)
        if prev is not None and seq > prev["seq"] + 1:  # a gap an epoch declared
            self._lost(entry, prev["seq"])
        frontier = self.frontier
        if frontier is not None:
            while frontier.size + 1 < seq:  # the seqs an epoch declared lost
                frontier, _ = frontier.append(merkle.lost_leaf(frontier.size + 1))
            frontier, _ = frontier.append(leaf_hash(raw if raw is not None else jcs(entry)))
            self.frontier = frontier
            want = self.expected_roots.get(seq)
            if want is not None and frontier.root() != want:
                raise BadEntryError(
                    seq,
                    f"the Merkle root at size {seq} is not the one a kept checkpoint "
                    "signed: rewritten or forked",
                )
        self.epochs += entry["mechanic"] == EPOCH_MECHANIC
        if seq in self.expected and entry["entry_hash"] != self.expected[seq]:
            raise BadEntryError(
                seq,
                "this entry differs from an earlier checkpoint or receipt: rewritten or forked",
            )
        if self.covering is not None and seq == self.covering.size:
            self._check_covering(seq)
        self.prev = entry
        self.count += 1

    def _lost(self, epoch: dict[str, Any], lost_after: int) -> None:
        """The seqs after ``lost_after`` up to this epoch entry are declared lost: named in
        the report with the epoch's reason. A kept checkpoint or receipt of a seq among them
        saw entries the log no longer holds: nothing here can show it consistent (its root
        was over those entries), so it is refused, not skipped."""
        seq: int = epoch["seq"]
        self.gaps.append((lost_after, seq - 1))
        request = epoch.get("request") or {}
        reason = request.get("reason") if isinstance(request, dict) else None
        self.lost.append(
            LostRange(
                epoch_seq=seq,
                lost_after=lost_after,
                resume_after=seq - 1,
                reason=reason if isinstance(reason, str) else "",
            )
        )
        kept = sorted(s for s in (*self.expected, *self.expected_roots) if lost_after < s < seq)
        if kept:
            raise BadEntryError(
                seq,
                f"a kept checkpoint or receipt saw seq {kept[0]}, but this epoch declares seqs "
                f"{lost_after + 1}..{seq - 1} lost: the log no longer holds what a player "
                "kept, so it cannot be shown consistent with it",
            )

    def equivocation(self) -> None:
        """Two kept checkpoints of one size with two roots: the log showed two histories,
        whatever the entries say."""
        seen: dict[int, bytes] = {}
        for size, root in self.trust.roots:
            if seen.setdefault(size, root) != root:
                raise BadEntryError(
                    size,
                    f"two kept checkpoints of size {size} disagree on the root: the log "
                    "showed two histories (an equivocation)",
                )

    def _check_covering(self, seq: int) -> None:
        """The checkpoint that stood in for its entries' signatures is signed by a key this
        log published and had not retired (under a pinned root, a key from ``keys`` only
        for a log read from the middle, which may have published it before); its root and
        head matched."""
        covering, check = self.covering, self.check
        assert covering is not None and check is not None  # noqa: S101 - entry() sets them
        key_id = covering.key_id
        listed = self.trust.keys if self.trust.root is None or check.partial else None
        public_key = check.keys.published.get(key_id) or (listed or {}).get(key_id)
        if (
            public_key is None
            or key_id in check.keys.retired
            or not verify_checkpoint(covering, public_key)
        ):
            raise BadEntryError(
                seq,
                f"the checkpoint of size {seq} that stands in for its entries' signatures "
                f"is not signed by a key this log published ({key_id}): check them one by one",
            )

    def finish(self) -> None:
        base, table, head = self.trust.base, self.trust.table, self.trust.head
        if self.prev is None and base is not None:  # nothing kept beyond the base
            self.prev = {"seq": base[0], "entry_hash": base[1], "table": table}
        if head is not None:
            check_head(self.prev, head)
        last = self.prev["seq"] if self.prev else 0
        beyond = [seq for seq in [*self.expected, *self.expected_roots] if seq > last]
        if beyond and not self.trust.open_end:
            raise BadEntryError(
                last + 1,
                f"the log ends at seq {last}, but a checkpoint or receipt saw seq "
                f"{max(beyond)}: truncated",
            )

    def report(self, bad: BadEntryError | None) -> VerifyReport:
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
            unrevealed=check.sessions.unrevealed() if check else 0,
            not_fair=list(check.sessions.not_fair) if check else [],
            lost=list(self.lost),
            epochs=self.epochs,
            root_hash=base64.b64encode(root).decode() if root is not None else None,
            covered_through=self.covering.size if self.covering is not None and ok else None,
            sealed_unrevealed=check.sealed.unrevealed() if check else [],
            sealed_revealed=len(check.sealed.revealed) if check else 0,
            sealed_unchecked=check.sealed.unchecked if check else 0,
            **words(check.sources if check else {}),
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
            published=dict(check.keys.published),
            retired=dict(check.keys.retired),
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
                    committed_at=s.committed_at,
                )
                for seed_id, s in check.sessions.sessions.items()
            ],
            v1_nonces=sorted(check.sessions.v1_nonces),
            v1_unrevealed=check.sessions.v1_unrevealed,
            client_seeds=dict(check.sessions.client_seeds),
            client_seed_chains={c: dict(at) for c, at in check.sessions.client_seed_chains.items()},
            not_fair=[(n.seq, n.why) for n in check.sessions.not_fair],
            gaps=list(self.gaps),
            lost=[(r.epoch_seq, r.lost_after, r.resume_after, r.reason) for r in self.lost],
            sealed_open=[check.sealed.open[seq] for seq in sorted(check.sealed.open)],
            sealed_revealed=sorted(check.sealed.revealed),
            sealed_unchecked=check.sealed.unchecked,
        )
