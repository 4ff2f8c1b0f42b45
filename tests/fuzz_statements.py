"""The differential fuzzer's mutations of what statements say and where they stand
(tests/fuzz_mutations.py draws them, re-chains and re-signs the log after them):

- ``sealed``: a sealed roll or its reveal edited the way an operator holding the keys
  could (docs/audit.md, "Sealed rolls", rows 25-28): an opening's field edited (and,
  half the time, the sealed roll's commitment re-made to match it, so only the opening's
  own checks can tell; a blind of the operator's choosing with its dice re-derived is
  the one edit no verifier of the log catches, and all must pass it), a reveal naming
  another seq, two reveals' openings swapped, a reveal repeated, moved before its roll
  or dropped, a sealed roll that shows its dice or whose request or session is edited.
- ``renumbered``: a statement (a retirement, an epoch, a renewal, a commitment, a
  reveal, the policy) moved, or any entry dropped or repeated, with the seqs renumbered
  so that they still rise by one and the seqs statements name (a reveal's roll, an
  epoch's gap) following their entries (or, one time in five, left as they were): only
  the statements' own rules can tell, not the seq order.
- ``epoch``: an epoch's declared gap edited (``lost_after``, ``resume_after``, both).

Each returns its detail and the index of the first entry it touched (where re-signing
starts), or None when the log holds nothing it can act on.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import random
from typing import Any

from fairroll.audit.entry import NotCanonicalError
from fairroll.audit.sealed import opening_commitment, sealed_seed
from fairroll.mechanics import replay_entry

__all__ = ["SEALED_KINDS", "epoch_gap", "rederive_opening", "renumbered", "sealed"]

Entry = dict[str, Any]
Log = list[Entry]
Done = tuple[str, str, int] | None  # (kind's suffix, detail, first index touched)

SEALED_KINDS = ("opening", "seq", "swap", "twice", "early", "drop", "roll")
#: What a sealed roll's edit changes (``plain``: its mechanic, as a plain roll of no dice).
ROLL_EDITS: tuple[str, ...] = ("dice", "outcome", "seed", "audience", "commitment", "extra")
ROLL_EDITS += ("missing",)
ROLL_EDITS += ("mechanic", "link", "source", "plain")
ROLL = "sealed.roll"
REVEAL = "sealed.reveal"


def sealed(log: Log, rng: random.Random) -> Done:
    """One edit of a sealed roll or a reveal (module docstring)."""
    reveals = [i for i, e in enumerate(log) if e["mechanic"] == REVEAL and _opening(e)]
    rolls = [i for i, e in enumerate(log) if e["mechanic"] == ROLL]
    if not reveals and not rolls:
        return None
    how = rng.choice(SEALED_KINDS if reveals else ("roll",))
    if how == "roll" and not rolls:
        how = "opening"
    if how == "swap" and len(reveals) < 2:
        how = "seq"
    if how == "opening":
        return how, *_opening_edited(log, rng.choice(reveals), rng)
    if how == "seq":
        at = rng.choice(reveals)
        target = _another_seq(log, at, rng)
        old = log[at]["request"]["seq"]
        log[at]["request"]["seq"] = target
        return how, f"the reveal at seq {log[at]['seq']} names seq {target!r} (was {old})", at
    if how == "swap":
        one, two = rng.sample(reveals, 2)
        first, second = log[one]["request"], log[two]["request"]
        first["opening"], second["opening"] = second["opening"], first["opening"]
        seqs = f"{log[one]['seq']} and {log[two]['seq']}"
        return how, f"the reveals at seq {seqs} swapped openings", min(one, two)
    if how == "twice":
        at = rng.choice(reveals)
        to = rng.randrange(at + 1, len(log) + 1)
        detail = f"the reveal at seq {log[at]['seq']} repeated at index {to}"
        copied = copy.deepcopy(log[at])
        detail += _reseq(log, lambda out: out.insert(to, copied), rng)
        return how, detail + _signed_as_neighbour(log, copied, rng), at
    if how == "early":
        at = rng.choice(reveals)
        target = log[at]["request"]["seq"]
        roll = next((i for i, e in enumerate(log) if e["seq"] == target), None)
        if roll is None:  # its roll is behind the base: moved to the first entry read
            roll = 0
        detail = f"the reveal at seq {log[at]['seq']} moved before seq {log[roll]['seq']}"
        moved = log[at]
        detail += _reseq(log, lambda out: _move(out, moved, roll), rng)
        return how, detail + _signed_as_neighbour(log, moved, rng), roll
    if how == "drop":
        at = rng.choice(reveals)
        detail = f"the reveal at seq {log[at]['seq']} dropped"
        return how, detail + _reseq(log, lambda out: out.pop(at), rng), at
    return how, *_roll_edited(log, rng.choice(rolls), rng)


def renumbered(log: Log, rng: random.Random) -> tuple[str, str, int]:
    """A statement moved, or an entry dropped or repeated, the seqs renumbered."""
    statements = [i for i, e in enumerate(log) if e["source"] == "statement"]
    how = rng.choice(["move", "move", "drop", "repeat"]) if len(log) > 1 else "repeat"
    if how == "move" and statements:
        at = rng.choice(statements)
        to = rng.choice([i for i in range(len(log)) if i != at])
        moved = log[at]
        detail = f"seq {moved['seq']} ({moved['mechanic']}) moved to index {to}"
        detail += _reseq(log, lambda out: _move(out, moved, to), rng)
        return how, detail + _signed_as_neighbour(log, moved, rng), min(at, to)
    at = rng.randrange(len(log))
    entry = log[at]
    if how == "repeat":
        copied = copy.deepcopy(entry)
        detail = f"seq {entry['seq']} ({entry['mechanic']}) repeated"
        detail += _reseq(log, lambda out: out.insert(at + 1, copied), rng)
        return how, detail + _signed_as_neighbour(log, copied, rng), at
    detail = f"seq {entry['seq']} ({entry['mechanic']}) dropped"
    return "drop", detail + _reseq(log, lambda out: out.pop(at), rng), at


def epoch_gap(log: Log, rng: random.Random) -> Done:
    """An epoch's declared gap edited: its ``lost_after`` or ``resume_after`` (or both)
    moved alone (``gap``); widened over the entries before it, dropped (``widen``: a log
    every verifier must pass, an operator may declare more lost than was); or closed, the
    epoch and what follows renumbered onto the entry before it (``close``)."""
    epochs = [i for i, e in enumerate(log) if e["mechanic"] == "audit.epoch" and i > 0]
    if not epochs:
        return None
    at = rng.choice(epochs)
    epoch = log[at]
    request = epoch["request"]
    how = rng.choice(["gap", "widen", "close"])
    if how == "widen" and at > 1:
        count = rng.randint(1, min(3, at - 1))
        dropped = [e["seq"] for e in log[at - count : at]]
        del log[at - count : at]
        request["lost_after"] = log[at - count - 1]["seq"]
        detail = f"the epoch at seq {epoch['seq']} also declares seqs {dropped} lost"
        return how, detail, at - count
    if how == "close":
        gap = epoch["seq"] - log[at - 1]["seq"] - 1
        for entry in log[at:]:
            entry["seq"] -= gap
            target = entry["request"].get("seq") if entry["mechanic"] == REVEAL else None
            if isinstance(target, int) and target >= epoch["seq"] + gap:
                entry["request"]["seq"] = target - gap
        request["resume_after"] = epoch["seq"] - 1
        return how, f"the epoch's gap closed: the epoch at seq {epoch['seq']} loses nothing", at
    fields = rng.choice([("lost_after",), ("resume_after",), ("lost_after", "resume_after")])
    step = rng.choice([-2, -1, 1, 2])
    for name in fields:
        request[name] += step
    return "gap", f"the epoch at seq {epoch['seq']}: {' and '.join(fields)} {step:+d}", at


# -- sealed rolls ------------------------------------------------------------------------


def _opening(entry: Entry) -> bool:
    request = entry.get("request")
    return isinstance(request, dict) and isinstance(request.get("opening"), dict)


def _roll_of(log: Log, reveal: Entry) -> int | None:
    target = reveal["request"].get("seq")
    return next(
        (i for i, e in enumerate(log) if e["seq"] == target and e["mechanic"] == ROLL), None
    )


def _opening_edited(log: Log, at: int, rng: random.Random) -> tuple[str, int]:
    """A leaf of the reveal's opening edited; half the time its roll's commitment re-made
    to match (the operator re-signs from the roll), and a blind of its choosing then
    given the dice it derives (a log every verifier must pass)."""
    opening = log[at]["request"]["opening"]
    path = rng.choice(list(_leaves(opening, ())))
    old = _get(opening, path)
    new = _other_value(old, path, rng)
    _set(opening, path, new)
    detail = f"seq {log[at]['seq']} opening.{'.'.join(map(str, path))}: {old!r} -> {new!r}"
    roll = _roll_of(log, log[at])
    if roll is None or rng.random() < 0.5:
        return detail, at
    if path == ("blind",) and rng.random() < 0.7 and rederive_opening(log[roll], opening):
        detail += ", its dice re-derived"
    try:
        log[roll]["request"]["commitment"] = opening_commitment(opening)
    except NotCanonicalError:
        return detail, at
    return detail + f", seq {log[roll]['seq']} re-committed to it", roll


def rederive_opening(roll: Entry, opening: dict[str, Any]) -> bool:
    """The opening's dice and outcome as the server would have rolled them with its
    blind: False when its fields do not let the rules roll."""
    session = roll.get("session") or {}
    try:
        seed = sealed_seed(
            session["link"], session["client_seed"], session["nonce"], opening["blind"]
        )
        replayed = {"seq": roll["seq"], **{k: opening[k] for k in ("mechanic", "request")}}
        opening["dice"], opening["outcome"] = replay_entry(replayed, seed)
    except Exception:  # an opening the rules cannot read: left as it is
        return False
    return True


def _another_seq(log: Log, at: int, rng: random.Random) -> Any:
    """Another seq for the reveal at ``at`` to name: another sealed roll (revealed or
    not), a plain entry, itself, a later one, none at all, or one before the log read."""
    mine = log[at]["seq"]
    rolls = [e["seq"] for e in log if e["mechanic"] == ROLL]
    plain = [e["seq"] for e in log if e["mechanic"] != ROLL]
    choices: list[Any] = [mine, mine + 1, 0, -1, log[0]["seq"] - 1, str(mine - 1), True]
    choices += [rng.choice(plain)] * 2
    if rolls:
        choices += [rng.choice(rolls)] * 3
    return rng.choice([c for c in choices if c != log[at]["request"]["seq"]] or [0])


def _roll_edited(log: Log, at: int, rng: random.Random) -> tuple[str, int]:
    """A sealed roll that shows what it hides, or whose request or session is edited."""
    entry = log[at]
    reveal = next(
        (e for e in log if e["mechanic"] == REVEAL and _opening(e) and _roll_of(log, e) == at),
        None,
    )
    opening = reveal["request"]["opening"] if reveal else {"dice": [], "outcome": {}}
    request, session = entry["request"], entry["session"]
    how = rng.choice(ROLL_EDITS)
    if how == "dice":
        entry["dice"] = copy.deepcopy(opening["dice"]) or [{"face": 1, "sides": 6, "group": "a"}]
    elif how == "outcome":
        entry["outcome"] = copy.deepcopy(opening["outcome"]) or {}
    elif how == "seed":
        entry["seed"] = session.get("link") if isinstance(session, dict) else "x"
    elif how == "audience":
        request["audience"] = rng.choice(["gm", "blind", "self", "GM", "all"])
    elif how == "commitment":
        others = [e["request"]["commitment"] for e in log if e["mechanic"] == ROLL] + ["ab" * 32]
        old = request["commitment"]
        request["commitment"] = rng.choice([*others, old.upper(), old[:-1], old + "0"])
    elif how == "extra":
        request[rng.choice(["blind", "dice", "seq"])] = opening.get("blind", "ab" * 32)
    elif how == "missing":
        del request[rng.choice(sorted(request))]
    elif how == "mechanic":
        request["mechanic"] = rng.choice(["tft.check", "dice.roll", "sealed.roll", ""])
    elif how == "link" and isinstance(session, dict):
        session["link"] = rng.choice([None, "ab" * 32, str(session.get("link")).upper()])
    elif how == "source":
        entry["source"] = rng.choice(["drawn", "seeded", "statement", "supplied"])
    else:
        how = "plain"
        entry["mechanic"] = request.get("mechanic", "tft.contest")
    value = entry.get(how, request.get(how, session.get(how) if session else None))
    return f"seq {entry['seq']} sealed roll's {how} -> {str(value)[:40]!r}", at


# -- renumbering -------------------------------------------------------------------------


def _move(log: Log, entry: Entry, to: int) -> None:
    log.remove(entry)
    log.insert(to, entry)


def _signed_as_neighbour(log: Log, entry: Entry, rng: random.Random) -> str:
    """Most of the time, the moved or repeated ``entry`` signed by the key of the entry
    before it (after it, if first): the key the log holds valid where it now stands, so
    that its new place, not its key, is what a verifier must refuse."""
    at = next(i for i, e in enumerate(log) if e is entry)
    neighbour = log[at - 1] if at else log[min(1, len(log) - 1)]
    if rng.random() < 0.3 or neighbour["key_id"] == entry["key_id"]:
        return ""
    entry["key_id"] = neighbour["key_id"]
    return f", signed by {entry['key_id']}"


def _reseq(log: Log, change: Any, rng: random.Random) -> str:
    """Apply ``change`` (a structural edit of ``log``, in place), then give every entry
    from the first one that moved a seq one past its predecessor's, keeping the gap an
    epoch declares where the epoch still stands after it; the seqs a reveal or an epoch
    names then follow their entries, one time in five left as they were."""
    before = {id(e): e["seq"] for e in log}
    first_seq = log[0]["seq"]
    gaps = {  # an epoch's entry: how many seqs it declares lost before it
        id(e): e["seq"] - prev["seq"] - 1 for prev, e in itertools.pairwise(log)
    }
    change(log)
    seq = first_seq - 1
    for entry in log:
        seq += 1 + (gaps.get(id(entry), 0) if entry["mechanic"] == "audit.epoch" else 0)
        entry["seq"] = seq
    if rng.random() < 0.2:
        return " (seqs renumbered, the seqs statements name kept)"
    now = {before[id(e)]: e["seq"] for e in log if id(e) in before and before[id(e)] is not None}
    for entry in log:
        request = entry.get("request")
        if not isinstance(request, dict):
            continue
        if entry["mechanic"] == REVEAL and isinstance(request.get("seq"), int):
            request["seq"] = now.get(request["seq"], request["seq"])
        elif entry["mechanic"] == "audit.epoch" and isinstance(request.get("lost_after"), int):
            request["lost_after"] = now.get(request["lost_after"], request["lost_after"])
            request["resume_after"] = entry["seq"] - 1
    return " (seqs renumbered)"


# -- values ------------------------------------------------------------------------------


def _leaves(value: Any, path: tuple[Any, ...]) -> Any:
    """Every leaf path of a JSON value (an empty object or list is a leaf)."""
    if isinstance(value, dict) and value:
        for key in value:
            yield from _leaves(value[key], (*path, key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def _other_value(old: Any, path: tuple[Any, ...], rng: random.Random) -> Any:
    """Another value for an opening's leaf: of its type mostly, another type at times."""
    if rng.random() < 0.2:
        others: list[Any] = [None, "1", 1, 1.5, True, [], {}]
        return rng.choice([v for v in others if v != old])
    if path == ("blind",):
        return rng.choice(
            [hashlib.sha256(str(old).encode()).hexdigest(), str(old).upper(), str(old)[:-1]]
        )
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return rng.choice([old + 1, old - 1, 0, -1, 7])
    if isinstance(old, str):
        return rng.choice([f"{old}x", "", old.upper(), "tft.check", "b"])
    return rng.choice([0, "x", {}])
