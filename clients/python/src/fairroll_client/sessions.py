"""A player's hash-chain seed session: what makes a roll fair against the operator.

The server commits a hash chain's anchor in the log before the first roll; each roll
reveals the chain's next link, mixed with a client seed this client drew from
``secrets`` and kept, so neither side could pick the dice (``docs/randomness.md`` in the
service's repository). Every answer is checked here before it is returned, trusting
nothing the server says, with fairroll's own verification core (``fairroll_client._core``,
vendored: the checks are the log verifier's, not a rewrite):

- the answer is the log's: its receipt's inclusion proof leads from the entry's leaf to
  the root of a note signed by a key the pinned ``root`` certified, of this table's
  origin; the entry holds the dice, session and source answered and the request sent;
- it is this player's roll: this session, this client seed, the nonce sent;
- the link hashes to the link before it (or the anchor this client saw committed), and
  every die derives from ``link:client_seed:nonce``;
- the log's request is the one sent, and its outcome and words are the ones the rules
  give for those dice: the client re-resolves the request with the server's own
  mechanics (vendored with the core) and says the outcome in words itself. The words the
  server sends are its text, not in the log: they are returned only when they are the
  ones the client derived (a mechanic this client does not know, a server's plug-in, is
  returned with ``checked`` saying its outcome and words are the server's);
- a sealed roll (``roll(..., sealed="gm" | "blind" | "self")``: docs/audit.md, "Sealed
  rolls"): this client draws the blind (``secrets.token_hex(32)``) and sends it; the log
  holds a ``sealed.roll`` of the mechanic and audience sent; the answer's opening holds
  that blind and the request sent, SHA-256 of it (after ``fairroll/sealed/v1\\n``) is the
  entry's commitment, every die derives from ``link:client_seed:nonce:blind``, the
  answer's dice and outcome are the opening's, and the rules give that outcome and words;
- the note extends the last one this client verified for the table (``checkpoints``):
  the same root at the same size, else a consistency proof from the server; a history
  shown to this player alone is caught at its next roll ("the log forked").

A refusal never lets the server choose: a roll that did not go through is sent again
with the same nonce, client seed and Idempotency-Key; a 409 naming another nonce is not
followed: the client reads the log for its own nonce (the roll there is the answer if it
holds this client's request and client seed, ``UnfairRollError`` if it holds another),
then resends, then gives up (``NonceRefusedError``). A revealed, missing or used-up
session is never replaced silently (``SessionClosedError``). The client seed is drawn
afresh for each chain, once this client saw that chain's anchor committed: a server that
knew the client seed before it drew a chain could grind the chain for it.

Without a pinned root every check but one still runs, and the answer says so: its
``checked`` is NOT VERIFIED (who signed the log is then the server's word).

The protocol is written once, as generators that yield the HTTP calls they need
(``Call``) and take their answers: the sync and the async client only run them.

Keep ``state()`` to go on with the same session in another process (``Fairroll.session
(table, state=...)``).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from fairroll_client._core.audit import merkle
from fairroll_client._core.audit.entry import (
    COMMIT_MECHANIC,
    KEY_RETIRE_MECHANIC,
    RENEW_MECHANIC,
    jcs,
)
from fairroll_client._core.audit.receipts import (
    ReceiptError,
    UnsignedReceiptError,
    trusted_keys,
    verify_receipt,
)
from fairroll_client._core.audit.sealed import SEALED_ROLL_MECHANIC, sealed_seed
from fairroll_client._core.audit.verify.entries import BadEntryError, check_dice
from fairroll_client._core.audit.verify.sealed import SealedRoll, opening_problem
from fairroll_client._core.audit.verify.sessions import Session, Sessions
from fairroll_client._core.chain import is_link
from fairroll_client._core.mechanics import MECHANICS, replay_entry, words_of
from fairroll_client._core.randomness import SeededDice, committed_seed
from fairroll_client.checkpoints import Kept, KeptCheckpoints
from fairroll_client.errors import (
    FairrollError,
    NonceRefusedError,
    SessionClosedError,
    UnfairRollError,
)

if TYPE_CHECKING:
    from fairroll_client.client import Fairroll

__all__ = [
    "NOT_VERIFIED",
    "Call",
    "PlayerSession",
    "SessionRolls",
    "SessionState",
    "UnfairRollError",
    "run",
]

#: Sends of one roll at its nonce before the client gives up on it (NonceRefusedError).
ATTEMPTS = 3
#: An answer's ``checked`` when no root is pinned.
NOT_VERIFIED = (
    "NOT VERIFIED: no root key is pinned (Fairroll(..., root=...)): the chain, the dice and "
    "the receipt's proof hold, but who signed the log is the server's word"
)
#: Fields of a roll's body that are the session's, not the request the log records.
_NOT_REQUEST = frozenset({"table", "session", "seed", "dice", "sealed"})


@dataclass
class SessionState:
    """What a client keeps of its session: ids, its secret client seed, the next nonce,
    the current chain's anchor, first nonce and the seq that committed it, the link
    revealed last and the seq of the last entry of this session it verified."""

    table: str
    seed_id: str
    client_seed: str
    nonce: int
    anchor: str
    length: int
    first_nonce: int = 1
    last_link: str | None = None
    #: A roll sent and not answered: (nonce, Idempotency-Key, its body as JSON).
    pending: tuple[int, str, str] | None = None
    commit_seq: int = 0
    last_seq: int = 0
    #: The session's token (its opening shows it once): sent with each roll as
    #: ``Fairroll-Session-Token``, it binds the session to this player.
    token: str | None = None
    #: The blind drawn for a sealed roll at (nonce, client seed): every sealed roll sent
    #: at that nonce of that chain sends it (``SessionRolls._sealed_body``).
    blind: tuple[int, str, str] | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """An HTTP call the protocol needs: ``method``, ``path``, httpx ``options``."""

    method: str
    path: str
    options: dict[str, Any] = field(default_factory=dict)


#: A step of the protocol: yields calls, is sent their JSON, returns ``T``.
Steps = Generator[Call, Any, Any]


class SessionRolls:
    """What a session does between its HTTP calls, the same for the sync and the async
    client (``run`` and ``AsyncFairroll`` drive its generators): open, renew, roll, and
    the check of each answer."""

    def __init__(
        self, state: SessionState, root: str | None, kept: KeptCheckpoints | None = None
    ) -> None:
        self.state = state
        self.root = root
        #: The last checkpoint verified per table (the client's, shared by its sessions).
        self.kept = kept if kept is not None else KeptCheckpoints()
        #: key_id -> base64 public key: certified by ``root`` (all published without one).
        self.keys: dict[str, str] = {}
        #: key_id -> the seq of its ``key.retire``, as the entries this session read show it.
        self.retired: dict[str, int] = {}

    # -- opening and renewing ----------------------------------------------------------

    @classmethod
    def open(
        cls,
        table: str,
        root: str | None,
        player: str | None,
        length: int | None,
        kept: KeptCheckpoints | None = None,
    ) -> Generator[Call, Any, SessionRolls]:
        """Open a session (``POST /v1/tables/{table}/seeds``) and see its anchor committed
        (the commit entry, proven in a note by its receipt) before drawing a client seed."""
        asked = {k: v for k, v in {"player": player, "length": length}.items() if v is not None}
        made = yield Call("POST", f"/v1/tables/{table}/seeds", {"json": asked or None})
        if made.get("kind") != "chain" or not is_link(made.get("commitment")):
            raise UnfairRollError("the server did not open a hash-chain session", made)
        seq = made.get("commit_seq")
        receipt = made.get("receipt")
        if not isinstance(seq, int) or not isinstance(receipt, dict):
            raise UnfairRollError("the session's commitment comes with no receipt", made)
        rolls = cls(
            SessionState(
                table=table,
                seed_id=made["seed_id"],
                client_seed="",
                nonce=1,
                anchor=made["commitment"],
                length=made["length"],
                commit_seq=seq,
                last_seq=seq,
                token=made.get("token") if isinstance(made.get("token"), str) else None,
            ),
            root,
            kept,
        )
        entry = yield Call("GET", f"/v1/tables/{table}/entries/{seq}")
        yield from rolls._proven(entry, receipt, made)
        rolls._committed(entry, COMMIT_MECHANIC, made["commitment"], 1, made["length"], made)
        committed = entry.get("request") or {}
        if any(committed.get(k) != v for k, v in asked.items()):
            # The log commits a session for someone else, or with other chains, than asked.
            raise UnfairRollError("the log commits another session than the one asked for", made)
        rolls.state.client_seed = secrets.token_hex(16)  # after the anchor is seen committed
        return rolls

    def _renew(self) -> Steps:
        """The chain is used up: take up the next one, committed in the log by the roll
        that used the last link, once seen there (the ``session.renew`` entry, proven in
        the table's current note), with a new client seed; ``SessionClosedError`` if the
        server committed none."""
        s = self.state
        status = yield Call("GET", f"/v1/tables/{s.table}/seeds/{s.seed_id}")
        found = None
        if (
            not status.get("revealed")
            and status.get("first_nonce") == s.nonce
            and is_link(status.get("commitment"))
        ):
            found = yield from self._find(
                lambda e: (
                    e.get("mechanic") == RENEW_MECHANIC
                    and (e.get("request") or {}).get("seed_id") == s.seed_id
                    and (e.get("request") or {}).get("first_nonce") == s.nonce
                )
            )
        if found is None:
            raise SessionClosedError(
                409,
                {
                    "detail": f"seed session {s.seed_id} used up its chain and the log holds "
                    "no next one: start a new session (session(table, new=True))",
                    "status": status,
                },
            )
        entry, _ = found
        # The listing read again at each chain (docs/audit.md, row 5): a key retired while
        # the session ran, its operator signing on with it, is refused from here on.
        self.keys = {}
        yield from self._proven(entry, (yield from self._receipt_of(entry)), status)
        self._committed(
            entry, RENEW_MECHANIC, status["commitment"], s.nonce, status.get("length"), status
        )
        s.anchor, s.first_nonce, s.length = status["commitment"], s.nonce, status["length"]
        s.commit_seq, s.last_seq, s.last_link = entry["seq"], entry["seq"], None
        s.client_seed = secrets.token_hex(16)

    def _committed(
        self, entry: Any, mechanic: str, anchor: str, first: int, length: Any, said: Any
    ) -> None:
        """The entry commits this session's chain of ``length`` links with ``anchor``
        from nonce ``first`` (a renewal: after the chain this client rolled on)."""
        request = entry.get("request") if isinstance(entry, dict) else None
        s = self.state
        if (
            entry.get("mechanic") != mechanic
            or entry.get("table") != s.table
            or not isinstance(request, dict)
            or request.get("seed_id") != s.seed_id
            or request.get("commitment") != anchor
            or request.get("first_nonce") != first
            or request.get("length") != length
            or (mechanic == RENEW_MECHANIC and request.get("previous") != s.anchor)
        ):
            raise UnfairRollError("the log does not commit the chain the server named", said)

    # -- rolling -----------------------------------------------------------------------

    def roll(
        self,
        path: str,
        body: dict[str, Any],
        idempotency_key: str | None,
        sealed: str | None = None,
    ) -> Generator[Call, Any, dict[str, Any]]:
        """Roll ``body`` at this session's next nonce (``sealed``: sealed, for that
        audience, with a blind this client draws); the answer checked, or the roll at that
        nonce found in the log after a 409 that named another nonce."""
        for _ in range(ATTEMPTS):
            if self.used_up():
                yield from self._renew()
            if sealed is not None:
                body = self._sealed_body(body, sealed)
            nonce, key, sent = self.request(body, idempotency_key)
            headers = {"Idempotency-Key": key}
            if self.state.token:
                headers["Fairroll-Session-Token"] = self.state.token
            try:
                answer = yield Call("POST", path, {"json": sent, "headers": headers})
            except FairrollError as refused:
                found = yield from self._refused(refused, nonce, body)
                if found is None:
                    continue  # nothing holds the nonce: send the same roll again
                answer = found
            yield from self.check(answer, nonce, body, path)
            return answer  # type: ignore[no-any-return]
        s = self.state
        raise NonceRefusedError(
            409,
            {
                "detail": f"the server refuses nonce {s.pending[0] if s.pending else s.nonce} "
                f"of seed session {s.seed_id}: nothing holds it in the log; it may refuse "
                "this roll, not re-roll it (try again later: the same roll is sent)",
            },
        )

    def _sealed_body(self, body: dict[str, Any], audience: str) -> dict[str, Any]:
        """``body`` sealed for ``audience`` with a blind this client draws (never the
        server: a server-drawn blind could be ground), once per nonce of its chain, not
        once per roll: the server sees the blind before it answers, so a blind drawn
        afresh after a refusal (any status, or the roll asked again another way) would let
        it turn down dice it dislikes and take others at the same nonce. Kept, the dice at
        a nonce are fixed as a plain roll's are: a refusal can only refuse again."""
        s = self.state
        nonce = s.pending[0] if s.pending is not None else s.nonce
        if s.blind is None or s.blind[:2] != (nonce, s.client_seed):
            s.blind = (nonce, s.client_seed, secrets.token_hex(32))
        return {**body, "sealed": {"audience": audience, "blind": s.blind[2]}}

    def used_up(self) -> bool:
        """The chain has no link left for a new roll."""
        s = self.state
        return s.nonce > s.first_nonce + s.length - 1 and s.pending is None

    def request(
        self, body: dict[str, Any], idempotency_key: str | None
    ) -> tuple[int, str, dict[str, Any]]:
        """(nonce, Idempotency-Key, body) of the next try at rolling ``body``: a roll that
        did not go through is sent again with the same nonce, client seed and key."""
        s = self.state
        asked = json.dumps({**body, "table": s.table}, sort_keys=True)
        if s.pending is not None and s.pending[2] == asked:
            nonce, key = s.pending[0], idempotency_key or s.pending[1]
        else:  # a new roll, or another request after one that did not go through
            nonce = s.pending[0] if s.pending is not None else s.nonce
            key = idempotency_key or str(uuid.uuid4())
        s.pending = (nonce, key, asked)
        ref = {"seed_id": s.seed_id, "client_seed": s.client_seed, "nonce": nonce}
        return nonce, key, {**body, "table": s.table, "session": ref}

    def _refused(
        self, refused: FairrollError, nonce: int, body: dict[str, Any]
    ) -> Generator[Call, Any, dict[str, Any] | None]:
        """After a refusal: the roll the log holds at ``nonce`` when the server named
        another nonce (None: nothing holds it, send again); raises for everything else."""
        s = self.state
        said = refused.problem if isinstance(refused.problem, dict) else {}
        if refused.status == 409 and isinstance(said.get("nonce"), int):
            if said["nonce"] == nonce:
                return None
            return (yield from self._at_nonce(nonce, body))
        closed = refused.status == 404
        if refused.status == 409:
            status = yield Call("GET", f"/v1/tables/{s.table}/seeds/{s.seed_id}")
            closed = bool(status.get("revealed"))
        if closed:
            # A server may roll at the nonce, look, then say the session is gone: the roll
            # the log holds there is this player's, whatever it answers.
            found = yield from self._at_nonce(nonce, body)
            if found is not None:
                return found
            raise SessionClosedError(refused.status, refused.problem) from refused
        if refused.status < 500:
            s.pending = None  # refused for what it asked: no nonce was taken
        raise refused

    def _at_nonce(
        self, nonce: int, body: dict[str, Any]
    ) -> Generator[Call, Any, dict[str, Any] | None]:
        """The log's roll at ``nonce`` of this session, as an answer (its receipt made
        from the table's current note), if it is this client's; ``UnfairRollError`` if
        another roll holds it; None if none does."""
        s = self.state
        found = yield from self._find(
            lambda e: (
                isinstance(e.get("session"), dict)
                and e["session"].get("seed_id") == s.seed_id
                and e["session"].get("nonce") == nonce
            )
        )
        if found is None:
            return None
        entry, words = found
        if isinstance(body.get("sealed"), dict) and entry.get("mechanic") == SEALED_ROLL_MECHANIC:
            # Its opening is this client's to make again: the blind, the request and the
            # link give the dice and outcome; ``check`` holds them to the commitment.
            if entry["session"].get("client_seed") != s.client_seed:
                raise UnfairRollError(
                    f"nonce {nonce} of this session holds a roll this client did not send", entry
                )
            answer = _reopened(entry, body)
            answer["receipt"] = yield from self._receipt_of(entry)
            return answer
        if entry["session"].get("client_seed") != s.client_seed or not _holds(entry, body):
            raise UnfairRollError(
                f"nonce {nonce} of this session holds a roll this client did not send", entry
            )
        answer = {k: entry.get(k) for k in ("mechanic", "source", "seed", "session")}
        answer |= {"dice": entry.get("dice"), "outcome": entry.get("outcome"), "words": words}
        answer["receipt"] = yield from self._receipt_of(entry)
        return answer

    def _find(
        self, wanted: Callable[[dict[str, Any]], bool]
    ) -> Generator[Call, Any, tuple[dict[str, Any], Any] | None]:
        """The first entry of the table after the last one this session verified that is
        ``wanted``, with its words; None when the log holds none."""
        s = self.state
        after: int | None = s.last_seq
        while after is not None:
            params = {"after": after, "limit": 100}
            page = yield Call("GET", f"/v1/tables/{s.table}/entries", {"params": params})
            words = page.get("words") or []
            for i, entry in enumerate(page.get("entries", [])):
                if not isinstance(entry, dict):
                    continue
                self._seen_retired(entry)
                if wanted(entry):
                    return entry, (words[i] if i < len(words) else None)
            after = page.get("next_after")
        return None

    def _seen_retired(self, entry: dict[str, Any]) -> None:
        """A ``key.retire`` read in the log: its key signs no note of its seq or more."""
        request, seq = entry.get("request"), entry.get("seq")
        if entry.get("mechanic") != KEY_RETIRE_MECHANIC or not isinstance(request, dict):
            return
        if isinstance(request.get("key_id"), str) and isinstance(seq, int):
            self.retired.setdefault(request["key_id"], seq)

    # -- the check ---------------------------------------------------------------------

    def check(
        self, answer: Any, nonce: int, body: dict[str, Any], path: str | None = None
    ) -> Steps:
        """The answer is the log's roll of ``body`` at ``nonce`` in this session (sent to
        ``path``), proven, following from the committed chain; else ``UnfairRollError``.
        Marks the answer's ``checked``."""
        s = self.state
        receipt = answer.get("receipt") if isinstance(answer, dict) else None
        ref = answer.get("session") if isinstance(answer, dict) else None
        if not isinstance(receipt, dict) or not isinstance(receipt.get("seq"), int):
            raise UnfairRollError("the answer carries no receipt", answer)
        if not isinstance(ref, dict):
            raise UnfairRollError("the roll is not in a seed session", answer)
        if ref.get("seed_id") != s.seed_id:
            raise UnfairRollError("the roll is not in this player's session", answer)
        if ref.get("client_seed") != s.client_seed:
            raise UnfairRollError("the roll is not made with this client's client seed", answer)
        if ref.get("nonce") != nonce:
            raise UnfairRollError(f"the roll is not at nonce {nonce}, the one sent", answer)
        entry = yield Call("GET", f"/v1/tables/{s.table}/entries/{receipt['seq']}")
        yield from self._proven(entry, receipt, answer)
        sealed = body.get("sealed")
        names = ["mechanic", "source", "session"] + ([] if sealed else ["dice", "outcome"])
        for name in names:
            if entry.get(name) != answer.get(name):  # JSON equality: 13 is 13.0
                raise UnfairRollError(f"the answer's {name} is not the log's", answer)
        if entry.get("source") != "committed":
            raise UnfairRollError("the log holds another roll than the one sent", answer)
        opened = _opened(entry, answer, body, path) if sealed else None
        if opened is None and not _holds(entry, body):
            raise UnfairRollError("the log holds another request than the one sent", answer)
        sessions = Sessions(partial=False, reveals={}, dice=_dice, check_now=_dice)
        session = Session(s.anchor, nonce - 1, length=s.length, first=s.first_nonce)
        session.last = s.last_link or s.anchor
        session.committed_at = s.commit_seq
        sessions.sessions[s.seed_id] = session
        if s.last_link is None and nonce != s.first_nonce:
            raise UnfairRollError("this client has no link to check the roll's against", answer)
        try:
            sessions.committed(entry, dice=opened is None)
        except BadEntryError as bad:
            raise UnfairRollError(bad.reason, answer) from None
        # The dice derive from this seed (checked just now, or a sealed roll's with its
        # opening): the rules, run here on them, must give the answer's outcome and words.
        seed = committed_seed(ref["link"], s.client_seed, nonce)
        if opened is not None:
            seed = sealed_seed(ref["link"], s.client_seed, nonce, body["sealed"]["blind"])
        known = replayed(opened or entry, seed, answer)
        s.last_link, s.nonce, s.pending = ref["link"], nonce + 1, None
        s.last_seq = max(s.last_seq, receipt["seq"])
        checked = f"verified under root {self.root}" if self.root else NOT_VERIFIED
        if not known:
            checked += (
                f"; its outcome and words are the server's: this client does not know "
                f"mechanic {entry.get('mechanic')!r} to replay them"
            )
        answer["checked"] = checked

    def _proven(self, entry: Any, receipt: Mapping[str, Any], said: Any) -> Steps:
        """The receipt proves ``entry`` in a note of this table, signed by a key the
        pinned root certified (any published key without a root: NOT VERIFIED)."""
        s = self.state
        note = receipt.get("checkpoint")
        origin = note.split("\n", 1)[0] if isinstance(note, str) else ""
        if not isinstance(entry, dict) or entry.get("table") != s.table:
            raise UnfairRollError(f"the log's entry is not of table {s.table}", said)
        if not origin.endswith(f"/{s.table}"):
            raise UnfairRollError(f"the receipt's note is not of table {s.table}", said)
        read = receipt.get("key_id") not in self.keys
        if read:
            published = yield Call("GET", "/v1/keys")
            self.keys = _keys(published, self.root, self.retired)
        log_name = origin[: -len(s.table) - 1]
        try:
            try:
                size, root = verify_receipt(entry, receipt, self.keys, log_name=log_name)
            except UnsignedReceiptError:
                if read:
                    raise
                # The note's key may be one certified since this client read the listing:
                # after a rotation the key that took over signs the notes proving the old
                # key's entries (a retried roll, a roll found in the log). Read it again.
                published = yield Call("GET", "/v1/keys")
                self.keys = _keys(published, self.root, self.retired)
                size, root = verify_receipt(entry, receipt, self.keys, log_name=log_name)
        except (ReceiptError, KeyError, TypeError, ValueError) as bad:
            raise UnfairRollError(f"the receipt does not hold: {bad}", said) from None
        yield from self._extends(Kept(size, root, str(note)), said)

    def _extends(self, seen: Kept, said: Any) -> Steps:
        """The note ``seen`` (just verified) and the last one this client verified for the
        table state one history: the same root at one size, else a consistency proof
        from the server between them; the larger is kept. Else ``UnfairRollError``, the
        log forked, with both notes (evidence). Kept by the note's origin (``<log
        name>/<table>``), what the log signs."""
        s = self.state
        origin = seen.note.split("\n", 1)[0]
        while True:
            kept = self.kept.get(origin)
            if kept is not None and kept.size == seen.size:
                if kept.root != seen.root:
                    raise UnfairRollError(
                        f"the log forked: two signed trees of size {seen.size} with two "
                        "roots, the one this client verified before and this receipt's; "
                        f"keep both notes (fairroll verify --equivocation A B)\n{kept.note}"
                        f"\n{seen.note}",
                        said,
                    )
            elif kept is not None:
                (low, low_root), (high, high_root) = sorted(
                    ((kept.size, kept.root), (seen.size, seen.root))
                )
                proven = yield Call(
                    "GET",
                    f"/v1/tables/{s.table}/proofs/consistency",
                    {"params": {"from": low, "to": high}},
                )
                try:
                    hashes = [base64.b64decode(h, validate=True) for h in proven["proof"]]
                    merkle.verify_consistency(low, high, low_root, high_root, hashes)
                except (merkle.ProofError, binascii.Error, KeyError, TypeError) as bad:
                    raise UnfairRollError(
                        f"the log forked: the tree of size {seen.size} this receipt's note "
                        f"states does not extend the one of size {kept.size} this client "
                        f"verified before ({bad}); keep both notes\n{kept.note}\n{seen.note}",
                        said,
                    ) from None
            if self.kept.keep(origin, seen, kept):
                return

    def _receipt_of(self, entry: Any) -> Generator[Call, Any, dict[str, Any]]:
        """A receipt for a log entry no answer carried: the table's current note and
        the entry's inclusion proof in it (checked by ``_proven`` like any receipt)."""
        s = self.state
        note = yield Call("GET", f"/v1/tables/{s.table}/checkpoint")
        size = note.get("size")
        proof = yield Call(
            "GET",
            f"/v1/tables/{s.table}/proofs/inclusion",
            {"params": {"seq": entry.get("seq"), "size": size}},
        )
        return {
            "table": entry.get("table"),
            "seq": entry.get("seq"),
            "entry_hash": entry.get("entry_hash"),
            "key_id": entry.get("key_id"),
            "leaf_hash": proof.get("leaf_hash"),
            "checkpoint": note.get("text"),
            "tree_size": size,
            "proof": proof.get("proof"),
        }


def run(steps: Generator[Call, Any, Any], client: Fairroll) -> Any:
    """Drive a protocol's generator over the sync client: each call made, its JSON sent
    back, a refusal thrown in."""
    try:
        call = next(steps)
        while True:
            try:
                result = client.call(call.method, call.path, **call.options)
            except FairrollError as refused:
                call = steps.throw(refused)
            else:
                call = steps.send(result)
    except StopIteration as done:
        return done.value


class PlayerSession:
    """One player's seed session on one table; ``roll`` rolls any mechanic in it."""

    def __init__(self, client: Fairroll, state: SessionState) -> None:
        self.client = client
        self._rolls = SessionRolls(state, client.root, client.checkpoints)

    @classmethod
    def open(
        cls, client: Fairroll, table: str, player: str | None = None, length: int | None = None
    ) -> PlayerSession:
        """Start a new hash-chain session on ``table`` (for ``player``, if named; chains of
        ``length`` links, else the server's default)."""
        opening = SessionRolls.open(table, client.root, player, length, client.checkpoints)
        rolls: SessionRolls = run(opening, client)
        return cls(client, rolls.state)

    def state(self) -> SessionState:
        return SessionState(**asdict(self._rolls.state))

    @property
    def seed_id(self) -> str:
        return self._rolls.state.seed_id

    def roll(
        self,
        path: str,
        body: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        sealed: str | None = None,
    ) -> dict[str, Any]:
        """Roll ``body`` (no ``seed``, ``dice`` or ``session``) at this session's next
        nonce (``sealed``: a sealed roll for that audience), and check the answer before
        returning it (see the module's words)."""
        steps = self._rolls.roll(path, body, idempotency_key, sealed)
        return run(steps, self.client)  # type: ignore[no-any-return]


def _holds(entry: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """The entry's request is the one ``body`` asked, both read as its mechanic reads a
    request (the server's defaults filled in alike: a field the server added that the
    player did not send differs); for a mechanic this client does not know, the request
    holds every field sent."""
    request = entry.get("request")
    if not isinstance(request, dict):
        return False
    sent = {k: v for k, v in body.items() if k not in _NOT_REQUEST}
    mechanic = MECHANICS.get(str(entry.get("mechanic")))
    if mechanic is None:
        return all(k in request and request[k] == v for k, v in sent.items())
    try:
        kind = mechanic.input_type
        return bool(msgspec.convert(sent, kind) == msgspec.convert(request, kind))
    except msgspec.ValidationError:
        return False


def _opened(
    entry: dict[str, Any], answer: Any, body: dict[str, Any], path: str | None
) -> dict[str, Any]:
    """A sealed roll's answer against its ``sealed.roll`` entry: the mechanic (the one at
    ``path``, when this client knows it) and audience sent, the opening holding the blind
    this client drew, opening the commitment, its dice derived from
    ``link:client_seed:nonce:blind``, and the answer's dice and outcome the opening's.
    Returns the opening as an entry of its mechanic (to hold the request sent and replay
    the rules); else ``UnfairRollError``."""
    sent, sealed, opening = body["sealed"], entry.get("request"), answer.get("opening")
    if entry.get("mechanic") != SEALED_ROLL_MECHANIC or not isinstance(sealed, dict):
        raise UnfairRollError("the log holds no sealed roll where the answer says", answer)
    if not isinstance(opening, dict):
        raise UnfairRollError("the answer of a sealed roll carries no opening", answer)
    at = next((m.name for m in MECHANICS.values() if f"/v1/{m.system}{m.path}" == path), None)
    if at is not None and sealed.get("mechanic") != at:
        raise UnfairRollError(f"the log seals another mechanic than {at}, the one sent", answer)
    if sealed.get("audience") != sent["audience"]:
        raise UnfairRollError("the sealed roll's audience is not the one sent", answer)
    if opening.get("blind") != sent["blind"]:
        raise UnfairRollError("the opening's blind is not the one this client drew", answer)
    ref = entry["session"]
    roll = SealedRoll(
        seq=entry["seq"],
        mechanic=str(sealed.get("mechanic")),
        commitment=str(sealed.get("commitment")),
        link=str(ref.get("link")),
        client_seed=str(ref.get("client_seed")),
        nonce=int(ref.get("nonce", 0)),
    )
    problem = opening_problem(roll, opening, None, entry["seq"])
    if problem is not None:
        raise UnfairRollError(problem[1], answer)
    for name in ("dice", "outcome"):
        if not _same(answer.get(name), opening[name]):
            raise UnfairRollError(f"the answer's {name} is not its opening's", answer)
    opened = {"seq": entry["seq"], **{k: opening[k] for k in ("mechanic", "request")}}
    opened |= {"dice": opening["dice"], "outcome": opening["outcome"]}
    if not _holds(opened, body):
        raise UnfairRollError("the opening holds another request than the one sent", answer)
    return opened


def _reopened(entry: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The answer of this client's sealed roll at ``entry``, made again from what it sent
    (the blind, the request) and the entry's link: ``check`` holds it to the commitment."""
    sealed, ref = entry.get("request") or {}, entry["session"]
    mechanic = MECHANICS.get(str(sealed.get("mechanic")))
    if mechanic is None:
        raise UnfairRollError(
            f"this client does not know mechanic {sealed.get('mechanic')!r} to open its "
            "sealed roll again",
            entry,
        )
    sent = {k: v for k, v in body.items() if k not in _NOT_REQUEST}
    request = msgspec.convert(sent, mechanic.input_type)
    blind = body["sealed"]["blind"]
    dice = SeededDice(sealed_seed(ref["link"], ref["client_seed"], ref["nonce"], blind))
    outcome = mechanic.resolve(request, dice)
    opening = {
        "blind": blind,
        "mechanic": mechanic.name,
        "request": msgspec.to_builtins(request),
        "dice": msgspec.to_builtins(dice.dice),
        "outcome": msgspec.to_builtins(outcome),
    }
    answer = {k: entry.get(k) for k in ("mechanic", "source", "seed", "session")}
    words = msgspec.to_builtins(words_of(mechanic.name, opening["request"], outcome))
    return (
        answer
        | {"dice": opening["dice"], "outcome": opening["outcome"], "words": words}
        | {"opening": opening}
    )


def _keys(published: Any, root: str | None, retired: dict[str, int]) -> dict[str, str]:
    """The keys ``root`` certified, each retired one trusted only below the seq of its
    ``key.retire`` (``retired``; unknown: for nothing, as the listing's ``not_after``)."""
    if root is not None:
        return trusted_keys(published, root, retired=retired)
    return {
        str(k.get("key_id")): str(k.get("public_key"))
        for k in published.get("keys", [])
        if isinstance(k, dict)
    }


def _dice(entry: dict[str, Any], seed: str | None, *_: Any) -> None:
    check_dice(entry, seed, None, jcs)


def replayed(entry: dict[str, Any], seed: str, answer: Any) -> bool:
    """The rules the server runs (vendored) give, from the request the log holds (the
    one sent: ``_holds``) and ``seed``, the answer's dice, then its outcome, then its
    words; else ``UnfairRollError`` naming which differs. False, checking nothing, for a
    mechanic this client does not know (a server's plug-in)."""
    mechanic = MECHANICS.get(str(entry.get("mechanic")))
    if mechanic is None:
        return False
    try:
        dice, outcome = replay_entry(entry, seed)
    except (ValueError, KeyError, TypeError, msgspec.ValidationError) as bad:
        raise UnfairRollError(f"the request does not replay: {bad}", answer) from None
    # Against the log's entry, whose JSON is canonical (the answer, held equal to it as JSON
    # already, may spell an integer 13.0).
    if not _same(dice, entry.get("dice")):
        raise UnfairRollError("the answer's dice are not the ones its request rolls", answer)
    if not _same(outcome, entry.get("outcome")):
        raise UnfairRollError(
            "the answer's outcome is not the one the rules give for its dice", answer
        )
    words = msgspec.to_builtins(words_of(mechanic.name, entry["request"], outcome))
    if not _same(words, answer.get("words")):
        raise UnfairRollError(
            "the answer's words are not the ones its outcome says (the server's text)", answer
        )
    return True


def _same(ours: Any, theirs: Any) -> bool:
    """One JSON value, byte for byte (RFC 8785): ``True`` is not ``1``."""
    try:
        return jcs(ours) == jcs(theirs)
    except (ValueError, TypeError):
        return False
