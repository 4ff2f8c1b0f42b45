"""What one entry must hold alone: a strict JSON object with every field, its
RFC 8785 hash, its seq after the one before (or a declared gap), its dice derived
from its seed, and its request replayed; and the checks that need no other entry, done
in another process (``check_tasks``, for ``parallel``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

import msgspec

from fairroll.audit.entry import NotCanonicalError, canonical, canonical_of, chain_hash
from fairroll.audit.signing import verify_signature
from fairroll.randomness import MAX_SIDES, derive_face

__all__ = [
    "EPOCH_MECHANIC",
    "BadEntryError",
    "DuplicateKeyError",
    "Replay",
    "Task",
    "check_dice",
    "check_hash",
    "check_head",
    "check_tasks",
    "check_window",
    "declared_gap",
    "is_integer",
    "loads_strict",
    "parse",
]

#: A signed entry that opens a new epoch after a loss: ``request`` is ``{lost_after,
#: resume_after, reason}``, its seq is ``resume_after + 1``, and it chains on the entry
#: at ``lost_after``; the seqs between were acknowledged once and are lost for good.
EPOCH_MECHANIC = "audit.epoch"


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


class DuplicateKeyError(ValueError):
    """A JSON object with one key twice: parsers disagree on which value wins."""


def loads_strict(text: bytes | str) -> Any:
    """JSON with no key twice in any object (``DuplicateKeyError``), no NaN or Infinity."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


class BadEntryError(Exception):
    """The first bad entry: its seq (None: before any seq could be read) and why."""

    def __init__(self, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.seq = seq
        self.reason = reason


def parse(
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
        if isinstance(value, dict) and fields_hold(value, expected_seq):
            return value, stripped
    fast = canonical_of(raw.rstrip(b"\r\n"))
    if isinstance(fast, dict) and fields_hold(fast, expected_seq):
        return fast, raw.rstrip(b"\r\n")
    try:
        entry = loads_strict(line)
    except DuplicateKeyError as exc:
        raise BadEntryError(expected_seq or seq_hint(line), f"not a JSON entry: {exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadEntryError(expected_seq, f"not a JSON entry: {exc}") from None
    except RecursionError:
        raise BadEntryError(expected_seq, "not a JSON entry: nested too deeply") from None
    if not isinstance(entry, dict):
        raise BadEntryError(expected_seq, "not a JSON object")
    fields_hold(entry, expected_seq, strict=True)
    return entry, None


def fields_hold(entry: dict[str, Any], expected_seq: int | None, *, strict: bool = False) -> bool:
    """Every required field is there with its type; else False, or (``strict``) the
    error naming the first one that is not."""
    seq = entry.get("seq")
    at = seq if isinstance(seq, int) and not isinstance(seq, bool) else expected_seq
    for name, kind in _REQUIRED.items():
        value = entry.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            if not strict:
                return False
            raise BadEntryError(at, f"field {name!r} is missing or not a {kind.__name__}")
    return True


def seq_hint(line: bytes | str) -> int | None:
    """The seq an unreadable entry seems to have (to name it), if any."""
    try:
        seq = msgspec.json.decode(line, type=_SeqOnly).seq
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return seq


#: Decodes a line whose form another process checks (``parse(trusting=True)``).
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


def is_integer(value: Any, equal: int | None = None) -> TypeGuard[int]:
    """A JSON integer (``equal`` to it, if given): JSON ``true`` is no number, though
    Python's ``True == 1`` (a chain's start, a reveal's count of rolls, an epoch's seqs of
    ``true`` are not 1, as the JavaScript core holds).

    >>> is_integer(1, 1), is_integer(True, 1), is_integer(True), is_integer(2, 1)
    (True, False, False, False)
    """
    return (
        isinstance(value, int) and not isinstance(value, bool) and (equal is None or value == equal)
    )


def declared_gap(entry: dict[str, Any], prev_seq: int) -> bool:
    """An epoch entry declares the seqs after ``prev_seq`` lost: it may follow the gap."""
    request = entry.get("request")
    return (
        entry.get("mechanic") == EPOCH_MECHANIC
        and isinstance(request, dict)
        and is_integer(request.get("lost_after"), prev_seq)
        and is_integer(request.get("resume_after"), entry["seq"] - 1)
        and entry["seq"] > prev_seq
    )


def check_window(entry: dict[str, Any], window: tuple[str | None, str | None] | None) -> None:
    # Only retirement is enforced: replicas' clocks may run a little behind the one that
    # first published a shared key, so not_before is information, not a bound.
    if window is None or window[1] is None:
        return
    if entry["time"] > window[1]:
        raise BadEntryError(
            entry["seq"],
            f"signed at {entry['time']}, after key {entry['key_id']} was retired at {window[1]}",
        )


def check_head(last: dict[str, Any] | None, head: tuple[int, str]) -> None:
    head_seq, head_hash = head
    last_seq = last["seq"] if last else 0
    if last_seq < head_seq:
        raise BadEntryError(
            last_seq + 1, f"the log ends at seq {last_seq} but its head is seq {head_seq}"
        )
    if last is not None and last_seq == head_seq and last["entry_hash"] != head_hash:
        raise BadEntryError(last_seq, "the last entry is not the head the store recorded")


def check_hash(entry: dict[str, Any], *, read_canonical: bool) -> None:
    """entry_hash is SHA-256(prev_hash || the canonical body)."""
    seq: int = entry["seq"]
    body = {name: value for name, value in entry.items() if name not in _UNHASHED}
    try:
        recomputed = chain_hash(entry["prev_hash"], body, read_canonical=read_canonical)
    except NotCanonicalError as exc:
        raise BadEntryError(seq, f"the entry has no canonical form: {exc}") from None
    except ValueError:
        raise BadEntryError(seq, "prev_hash is not hex") from None
    if recomputed != entry["entry_hash"]:
        raise BadEntryError(seq, "entry_hash does not match the entry's content")


def check_dice(
    entry: dict[str, Any], seed: str | None, replay: Replay | None, same: Callable[[Any], bytes]
) -> None:
    """The entry's dice derive from ``seed`` (None: its dice were supplied) and, with
    ``replay``, its request re-resolved gives its dice and outcome. Replaying derives the
    dice anyway, so each die is derived once; only when they differ does the die-by-die
    check run, to say which die and why."""
    seq: int = entry["seq"]
    if replay is None:
        if seed is not None:
            check_seeded_dice(seq, seed, entry["dice"])
        return
    try:
        dice, outcome = replay(entry, seed)
    except (ValueError, KeyError, TypeError, msgspec.ValidationError) as exc:
        if seed is not None:
            check_seeded_dice(seq, seed, entry["dice"])
        raise BadEntryError(seq, f"the request does not replay: {exc}") from None
    if same(dice) != same(entry["dice"]):
        if seed is not None:
            check_seeded_dice(seq, seed, entry["dice"])
        raise BadEntryError(seq, "replaying the request rolls different dice")
    if same(outcome) != same(entry.get("outcome")):
        raise BadEntryError(seq, "the recorded outcome does not follow from the dice")


def check_tasks(tasks: Sequence[Task], replay: Replay | None) -> int | None:
    """Do the independent checks ``sink`` collected (in another process): the first seq
    that fails one, or None. Where and why it fails, the serial pass says again."""
    for raw, public_key, dice in tasks:
        entry = canonical_of(raw)
        if not isinstance(entry, dict) or not fields_hold(entry, None):
            return seq_hint(raw) or 0
        seq: int = entry["seq"]
        try:
            check_hash(entry, read_canonical=True)
        except BadEntryError:
            return seq
        if public_key is not None and not verify_signature(
            public_key, entry["entry_hash"], entry["signature"]
        ):
            return seq
        if dice is not None:
            try:
                check_dice(entry, dice[1], replay, canonical)
            except BadEntryError:
                return seq
    return None


def check_seeded_dice(seq: int, seed: str, dice: list[Any]) -> None:
    try:
        key = seed.encode()
    except UnicodeEncodeError:
        raise BadEntryError(seq, "the seed holds a lone surrogate: not UTF-8") from None
    for position, die in enumerate(dice):
        sides = die.get("sides") if isinstance(die, dict) else None
        face = die.get("face") if isinstance(die, dict) else None
        # JSON true is no number, though Python's True == 1 (a face of true is not 1).
        if not isinstance(sides, int) or isinstance(sides, bool) or not 1 <= sides <= MAX_SIDES:
            raise BadEntryError(seq, f"die {position} has no valid sides")
        if isinstance(face, bool) or face != derive_face(key, position, sides):
            raise BadEntryError(seq, f"die {position} does not derive from the seed")


_UNHASHED = frozenset({"entry_hash", "signature"})
