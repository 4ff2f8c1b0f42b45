"""Check a table's chain entry by entry and name the first bad seq.

Works on the stored JSON of each entry (an NDJSON export, or the store), so
the checks are the ones any other verifier can make from the bytes alone:

1. the line is a JSON object with the entry fields;
2. seq continues the previous entry's (the first full export starts at 1);
3. prev_hash is the previous entry's entry_hash (GENESIS_HASH at seq 1);
4. entry_hash is SHA-256(prev_hash bytes || canonical JSON of the body);
5. the signature verifies with the public key named by key_id;
6. a seeded entry's dice re-derive from its seed, die by die; a committed
   entry's nonce is new to its session, and once the session's server seed is
   revealed (``reveals``) it matches the commitment and the dice re-derive;
7. optionally, ``replay`` re-resolves the request from the recorded dice and
   the outcome must come out identical;
8. an ``audit.epoch`` entry (an operator's statement, after a loss, that the seqs
   between its ``lost_after`` and its own seq are gone) may follow a gap of exactly
   those seqs; it is hashed and signed like any entry and has no dice. The report
   counts them in ``epochs``: a log with an epoch lost acknowledged rolls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from fairroll.audit.entry import GENESIS_HASH, canonical, chain_hash
from fairroll.audit.signing import verify_signature
from fairroll.randomness import MAX_SIDES, commitment_of, committed_seed, derive_face

__all__ = ["EPOCH_MECHANIC", "Replay", "VerifyReport", "verify_entries"]

#: A signed entry that opens a new epoch after a loss: ``request`` is ``{lost_after,
#: resume_after, reason}``, its seq is ``resume_after + 1``, and it chains on the entry
#: at ``lost_after``; the seqs between were acknowledged once and are lost for good.
EPOCH_MECHANIC = "audit.epoch"

#: Re-resolve an entry from its request and its seed (None: its recorded dice) ->
#: (dice, outcome) as JSON values.
Replay = Callable[[dict[str, Any], str | None], tuple[Any, Any]]

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


class VerifyReport(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict on a chain: ``ok``, or the first bad seq and why."""

    ok: bool
    entries: int
    first_seq: int | None = None
    last_seq: int | None = None
    head_hash: str | None = None
    first_bad_seq: int | None = None
    reason: str | None = None
    signatures_checked: bool
    outcomes_replayed: bool
    unrevealed: int = 0
    #: Epoch entries met: each says acknowledged seqs were lost before it.
    epochs: int = 0


class _BadEntryError(Exception):
    def __init__(self, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.seq = seq
        self.reason = reason


def verify_entries(
    lines: Iterable[bytes | str],
    *,
    keys: Mapping[str, str] | None,
    replay: Replay | None = None,
    table: str | None = None,
    head: tuple[int, str] | None = None,
    anchors: Iterable[tuple[int, str]] = (),
    reveals: Mapping[str, str] | None = None,
    windows: Mapping[str, tuple[str | None, str | None]] | None = None,
    base: tuple[int, str] | None = None,
) -> VerifyReport:
    """Verify entries given as JSON texts, in chain order.

    ``keys`` maps key_id to a base64 Ed25519 public key; ``None`` skips the
    signature check (the report says so). ``windows`` maps key_id to its
    (not_before, not_after): an entry signed after its key was retired is bad.
    ``table`` pins the table name. ``base`` (seq, entry_hash), a signed checkpoint an
    archived log was trimmed through: the first entry must be seq + 1 and chain on it.
    ``head`` (seq, entry_hash) is where the chain must end: a shorter chain
    was truncated, a different hash was rewritten. ``anchors`` are (seq,
    entry_hash) pairs seen earlier (signed checkpoints, receipts): the chain must
    still hold each of them, or it was rewritten, forked or truncated.
    """
    expected = dict(anchors)
    revealed = reveals or {}
    nonces: dict[tuple[str, int], int] = {}
    unrevealed = 0
    epochs = 0
    count = 0
    first_seq: int | None = None
    prev: dict[str, Any] | None = None
    try:
        for line in lines:
            if not line.strip():
                continue
            expected_seq = prev["seq"] + 1 if prev else (base[0] + 1 if base else None)
            entry = _parse(line, expected_seq)
            seq: int = entry["seq"]
            if prev is None:
                first_seq = seq
                if base is not None:
                    prev = {"seq": base[0], "entry_hash": base[1], "table": entry.get("table")}
            _check_window(entry, (windows or {}).get(entry["key_id"]))
            if not _check_entry(entry, prev, keys, replay, table, revealed, nonces):
                unrevealed += 1
            epochs += entry["mechanic"] == EPOCH_MECHANIC
            if seq in expected and entry["entry_hash"] != expected[seq]:
                raise _BadEntryError(
                    seq,
                    "this entry differs from an earlier checkpoint or receipt: rewritten or forked",
                )
            prev = entry
            count += 1
        if prev is None and base is not None:  # nothing kept beyond the base
            prev = {"seq": base[0], "entry_hash": base[1], "table": table}
        if head is not None:
            _check_head(prev, head)
        last = prev["seq"] if prev else 0
        beyond = [seq for seq in expected if seq > last]
        if beyond:
            raise _BadEntryError(
                last + 1,
                f"the chain ends at seq {last}, but a checkpoint or receipt saw seq "
                f"{max(beyond)}: truncated",
            )
    except _BadEntryError as bad:
        return VerifyReport(
            ok=False,
            entries=count,
            first_seq=first_seq,
            last_seq=prev["seq"] if prev else None,
            head_hash=prev["entry_hash"] if prev else None,
            first_bad_seq=bad.seq,
            reason=bad.reason,
            signatures_checked=keys is not None,
            outcomes_replayed=replay is not None,
            unrevealed=unrevealed,
            epochs=epochs,
        )
    return VerifyReport(
        ok=True,
        entries=count,
        first_seq=first_seq,
        last_seq=prev["seq"] if prev else None,
        head_hash=prev["entry_hash"] if prev else None,
        signatures_checked=keys is not None,
        outcomes_replayed=replay is not None,
        unrevealed=unrevealed,
        epochs=epochs,
    )


def _parse(line: bytes | str, expected_seq: int | None) -> dict[str, Any]:
    try:
        entry = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise _BadEntryError(expected_seq, f"not a JSON entry: {exc}") from None
    except RecursionError:
        raise _BadEntryError(expected_seq, "not a JSON entry: nested too deeply") from None
    if not isinstance(entry, dict):
        raise _BadEntryError(expected_seq, "not a JSON object")
    seq = entry.get("seq")
    at = seq if isinstance(seq, int) and not isinstance(seq, bool) else expected_seq
    for name, kind in _REQUIRED.items():
        value = entry.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _BadEntryError(at, f"field {name!r} is missing or not a {kind.__name__}")
    return entry


def _check_entry(
    entry: dict[str, Any],
    prev: dict[str, Any] | None,
    keys: Mapping[str, str] | None,
    replay: Replay | None,
    table: str | None,
    reveals: Mapping[str, str],
    nonces: dict[tuple[str, int], int],
) -> bool:
    """Check one entry; return False when it is a committed roll not revealed yet."""
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
            raise _BadEntryError(seq, "prev_hash does not match the previous entry's entry_hash")
        if entry["table"] != prev["table"]:
            raise _BadEntryError(seq, "the entry belongs to another table")
    if table is not None and entry["table"] != table:
        raise _BadEntryError(seq, f"the entry belongs to table {entry['table']!r}, not {table!r}")
    body = {name: value for name, value in entry.items() if name not in _UNHASHED}
    try:
        recomputed = chain_hash(entry["prev_hash"], body)
    except ValueError:
        raise _BadEntryError(seq, "prev_hash is not hex") from None
    if recomputed != entry["entry_hash"]:
        raise _BadEntryError(seq, "entry_hash does not match the entry's content")
    if keys is not None:
        public_key = keys.get(entry["key_id"])
        if public_key is None:
            raise _BadEntryError(seq, f"unknown signing key {entry['key_id']!r}")
        if not verify_signature(public_key, entry["entry_hash"], entry["signature"]):
            raise _BadEntryError(seq, "the signature does not verify")
    if entry["mechanic"] == EPOCH_MECHANIC:
        return True  # a signed statement about the log, no dice
    seed: str | None = None
    if entry["source"] == "seeded":
        seed = entry.get("seed")
        if not isinstance(seed, str):
            raise _BadEntryError(seq, "a seeded entry has no seed")
    elif entry["source"] == "committed":
        seed = _committed_seed(entry, reveals, nonces)
        if seed is None:
            return False
    elif entry["source"] != "supplied":
        raise _BadEntryError(seq, f"unknown dice source {entry['source']!r}")
    if seed is not None:
        _check_seeded_dice(seq, seed, entry["dice"])
    if replay is not None:
        try:
            dice, outcome = replay(entry, seed)
        except (ValueError, KeyError, TypeError, msgspec.ValidationError) as exc:
            raise _BadEntryError(seq, f"the request does not replay: {exc}") from None
        if canonical(dice) != canonical(entry["dice"]):
            raise _BadEntryError(seq, "replaying the request rolls different dice")
        if canonical(outcome) != canonical(entry.get("outcome")):
            raise _BadEntryError(seq, "the recorded outcome does not follow from the dice")
    return True


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


def _committed_seed(
    entry: dict[str, Any], reveals: Mapping[str, str], nonces: dict[tuple[str, int], int]
) -> str | None:
    """The seed of a committed roll once its session is revealed; checks the nonce order."""
    seq: int = entry["seq"]
    session = entry.get("session")
    if not isinstance(session, dict) or not all(
        isinstance(session.get(k), t)
        for k, t in (("seed_id", str), ("commitment", str), ("client_seed", str), ("nonce", int))
    ):
        raise _BadEntryError(seq, "a committed entry has no valid session")
    seed_id, nonce = session["seed_id"], session["nonce"]
    # Nonces are unique per session; replicas racing may append them slightly out of order.
    if nonce < 1 or (seed_id, nonce) in nonces:
        raise _BadEntryError(seq, f"nonce {nonce} of seed session {seed_id} is reused")
    nonces[seed_id, nonce] = seq
    server_seed = reveals.get(seed_id)
    if server_seed is None:
        return None
    if commitment_of(server_seed) != session["commitment"]:
        raise _BadEntryError(seq, "the revealed server seed does not match the commitment")
    return committed_seed(server_seed, session["client_seed"], nonce)


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
            last_seq + 1, f"the chain ends at seq {last_seq} but its head is seq {head_seq}"
        )
    if last is not None and last_seq == head_seq and last["entry_hash"] != head_hash:
        raise _BadEntryError(last_seq, "the last entry is not the head the store recorded")


def _check_seeded_dice(seq: int, seed: str, dice: list[Any]) -> None:
    key = seed.encode()
    for position, die in enumerate(dice):
        sides = die.get("sides") if isinstance(die, dict) else None
        face = die.get("face") if isinstance(die, dict) else None
        if not isinstance(sides, int) or not 2 <= sides <= MAX_SIDES:
            raise _BadEntryError(seq, f"die {position} has no valid sides")
        if face != derive_face(key, position, sides):
            raise _BadEntryError(seq, f"die {position} does not derive from the seed")


_UNHASHED = frozenset({"entry_hash", "signature"})
