"""A player as a witness of one table's log: every checkpoint it verified kept, each new
one proven consistent with the last, cosigned and posted; views compared with others.

>>> from fairroll_client import Fairroll, TableWitness
>>> dice = Fairroll("https://dice.example")                       # doctest: +SKIP
>>> witness = TableWitness.new(dice, "my-table", name="roth.players.example",
...                            root="ed25519:9f3a00cc8670da8e")   # doctest: +SKIP
>>> seen = witness.check()          # verify, prove consistent, cosign, post  # doctest: +SKIP
>>> seen.confirmed_by               # other cosigners of this very tree       # doctest: +SKIP

What it checks, trusting nothing the server says but the pinned root:

- the checkpoint's signed note (C2SP tlog-checkpoint) verifies under a key whose
  certificate the pinned root signed (``GET /v1/keys``);
- it is consistent (RFC 9162 consistency proof, ``GET .../proofs/consistency``) with
  every tree this witness verified before: a log that rewrote, forked or shrank its
  history fails, and two notes of one size with two roots are an :class:`Equivocation`
  (print it: both signed notes, the proof anyone can check with ``fairroll verify
  --equivocation A B``);
- then it cosigns the note (C2SP tlog-cosignature, ``cosignature/v1``) with the
  player's Ed25519 key and posts it (``POST .../cosignatures``): the other players see
  it, and a split view (two players shown two trees) shows as soon as views meet.

The server relays cosignatures and could drop some, or post its own under any name, so
:meth:`TableWitness.compare` takes a note from another player over a channel the
operator does not run (a VTT's own messages), and :attr:`Checked.confirmed_by` counts
only cosigners whose key this player trusts (:meth:`TableWitness.trust`: exchanged that
way, pinned, or a configured witness); any other name is in :attr:`Checked.unknown`.
While no trusted cosigner has cosigned this tree the view is *unconfirmed*. Notes,
proofs and cosignatures are checked by the vendored verification core. ``state()`` is
what to keep between runs (JSON: the key, the trees verified, the keys trusted).
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll_client._core.audit import merkle
from fairroll_client._core.audit.checkpoint import NoteError, open_note
from fairroll_client._core.audit.cosignature import (
    CosignatureError,
    cosign,
    open_cosignature,
    parse_verifier_key,
    raw_public_key,
    verifier_key,
)
from fairroll_client._core.audit.receipts import trusted_keys

if TYPE_CHECKING:
    from fairroll_client.client import Fairroll

__all__ = [
    "Checked",
    "Equivocation",
    "EquivocationError",
    "TableWitness",
    "ViewError",
    "cosign_note",
    "cosigned_by",
    "open_checkpoint",
    "trusted_keys",
    "verify_consistency",
]


class ViewError(ValueError):
    """A checkpoint that does not hold: not signed under the root, or not consistent."""


@dataclass(frozen=True, slots=True)
class Equivocation:
    """Two notes of one log, both signed under the pinned root, stating two roots for one
    size: the log showed two histories. Either note alone verifies; together they are a
    portable proof anyone can check (``fairroll verify --equivocation A B``)."""

    size: int
    first: str
    second: str

    def __str__(self) -> str:
        return (
            f"EQUIVOCATION: two signed trees of size {self.size} for one log\n"
            f"--- first note ---\n{self.first}--- second note ---\n{self.second}"
        )


class EquivocationError(ViewError):
    """The server showed this witness a second tree of a size it verified before."""

    def __init__(self, evidence: Equivocation) -> None:
        super().__init__(str(evidence))
        self.evidence = evidence


@dataclass(frozen=True, slots=True)
class Checked:
    """A checkpoint this witness verified and cosigned: its tree, who else cosigned that
    very tree under a key this player trusts (``confirmed_by``: keys pinned, exchanged
    with ``trust`` over a channel the operator does not run, or configured witnesses),
    and the names cosigning it under keys it does not know (``unknown``: anyone, the
    operator too, can post a cosignature named ``bob.players.example``; it counts for
    nothing)."""

    size: int
    root_hash: str
    note: str
    cosigned: str
    confirmed_by: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def unconfirmed(self) -> bool:
        """No trusted player or witness has cosigned this tree (yet): the server could be
        showing this player a view of its own."""
        return not self.confirmed_by


def open_checkpoint(note: str, origin: str, keys: Mapping[str, str]) -> tuple[int, bytes]:
    """(size, root) of a checkpoint note of ``origin`` signed by one of ``keys`` (key_id
    -> base64 public key, certified by the pinned root), opened by the core; the note's
    key name is the origin's log name (``<log name>/<table>``)."""
    if note.split("\n", 1)[0] != origin:
        raise ViewError(f"the note is not a checkpoint of {origin}")
    name = origin.rsplit("/", 1)[0]
    why = "the note carries no signature by a key the pinned root certified"
    for key in keys.values():
        try:
            size, root, _ = open_note(note, name, key)
        except NoteError as exc:
            if "does not verify" in str(exc) or "not a signature line" in str(exc):
                raise ViewError(str(exc)) from None
            why = why if "no signature by key" in str(exc) else str(exc)
            continue
        return size, root
    raise ViewError(why)


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 section 2.1.4.2, by the core: the tree of ``old`` leaves is a prefix of
    ``new``'s."""
    try:
        merkle.verify_consistency(old, new, old_root, new_root, proof)
    except merkle.ProofError as exc:
        raise ViewError(str(exc)) from None


def cosign_note(note: str, name: str, key: Ed25519PrivateKey, timestamp: int) -> str:
    """``note`` with ``name``'s C2SP cosignature (``cosignature/v1``) line added."""
    return note + cosign(note, name, key, timestamp) + "\n"


def cosigned_by(note: str, vkey: str) -> bool:
    """True when ``note`` carries the cosignature of ``vkey``'s cosigner and every line
    of that cosigner (its name and key ID) verifies: one failing line under a known key
    rejects the note (``ViewError``), as signed notes are opened."""
    cosigner = parse_verifier_key(vkey)
    body, signatures = _split(note)
    prefix = f"\u2014 {cosigner.name} "
    found = False
    for line in signatures:
        if not line.startswith(prefix):
            continue
        try:
            raw = base64.b64decode(line[len(prefix) :], validate=True)
        except (ValueError, binascii.Error):
            continue
        if raw[:4] != cosigner.key_id:
            continue
        try:
            open_cosignature(f"{body}\n{line}\n", vkey)
        except CosignatureError as exc:
            raise ViewError(f"{cosigner.name}'s cosignature line fails: {exc}") from None
        found = True
    return found


class TableWitness:
    """One player's view of one table's log (see the module's words)."""

    def __init__(
        self,
        dice: Fairroll,
        table: str,
        *,
        name: str,
        key: Ed25519PrivateKey,
        root: str,
        trees: Sequence[Mapping[str, Any]] = (),
        trusted: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.dice = dice
        self.table = table
        self.name = name
        self.key = key
        self.root = root
        self.clock = clock
        raw = raw_public_key(key)
        self.vkey = verifier_key(name, raw)
        #: Verifier keys of cosigners this player trusts (``trust``): only they confirm.
        self.trusted: set[str] = set()
        for vkey in trusted:
            self.trust(vkey)
        #: Every tree verified, by size: (root, its note).
        self.trees: dict[int, tuple[bytes, str]] = {
            int(t["size"]): (base64.b64decode(t["root_hash"]), str(t["note"])) for t in trees
        }

    @classmethod
    def new(
        cls, dice: Fairroll, table: str, *, name: str, root: str, trusted: Sequence[str] = ()
    ) -> TableWitness:
        """A witness with a fresh Ed25519 key (keep ``state()`` to go on with it);
        ``trusted``: verifier keys of other players and witnesses this player trusts."""
        key = Ed25519PrivateKey.generate()
        return cls(dice, table, name=name, key=key, root=root, trusted=trusted)

    def trust(self, vkey: str) -> None:
        """Trust a cosigner's verifier key: one the player pinned, a configured witness,
        or one exchanged over a channel the operator does not run (a VTT's own messages),
        never one the server lists."""
        parse_verifier_key(vkey)  # a well-formed Ed25519 cosignature key, or an error
        self.trusted.add(vkey)

    @classmethod
    def resume(cls, dice: Fairroll, state: Mapping[str, Any]) -> TableWitness:
        """The witness ``state()`` described."""
        key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(state["key"]))
        return cls(
            dice,
            state["table"],
            name=state["name"],
            key=key,
            root=state["root"],
            trees=state.get("trees", []),
            trusted=state.get("trusted", []),
        )

    def state(self) -> dict[str, Any]:
        """What to keep between runs (JSON): the table, root, key and trees verified."""
        raw = self.key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return {
            "table": self.table,
            "name": self.name,
            "root": self.root,
            "key": base64.b64encode(raw).decode(),
            "trees": [
                {"size": size, "root_hash": base64.b64encode(root).decode(), "note": note}
                for size, (root, note) in sorted(self.trees.items())
            ],
            "trusted": sorted(self.trusted),
        }

    def check(self) -> Checked:
        """Verify the table's current checkpoint, prove it consistent with every tree
        verified before, keep it, cosign it and post the cosignature; who else cosigned
        this tree is in the answer. :class:`EquivocationError` (print it: the evidence)
        if the server now shows another tree of a size verified before; :class:`ViewError`
        if the note is not signed under the root or the log is not consistent."""
        served = self.dice.call("GET", f"/v1/tables/{self.table}/checkpoint")
        note = str(served["text"])
        split = self.compare(note)
        if split is not None:
            raise EquivocationError(split)
        size, root = self._open(note)
        root_hash = base64.b64encode(root).decode()
        cosigned = cosign_note(_plain(note), self.name, self.key, int(self.clock()))
        self.dice.call(
            "POST",
            f"/v1/tables/{self.table}/cosignatures",
            json={"vkey": self.vkey, "note": cosigned},
        )
        listed = self.dice.call("GET", f"/v1/tables/{self.table}/cosignatures")
        confirmed, unknown = self._cosigners(listed.get("cosignatures", []), size, root)
        return Checked(
            size=size,
            root_hash=root_hash,
            note=note,
            cosigned=cosigned,
            confirmed_by=confirmed,
            unknown=unknown,
        )

    def _cosigners(
        self, listed: Sequence[Mapping[str, Any]], size: int, root: bytes
    ) -> tuple[list[str], list[str]]:
        """(confirmed, unknown): the names of trusted cosigners whose cosignature of this
        very tree verifies, and the names of the others, counted for nothing."""
        confirmed: set[str] = set()
        unknown: set[str] = set()
        for c in listed:
            vkey, note = c.get("vkey"), c.get("note")
            if vkey == self.vkey or not isinstance(note, str):
                continue
            if vkey not in self.trusted:
                unknown.add(str(c.get("name")))
                continue
            try:
                if self._open(note) == (size, root) and cosigned_by(note, str(vkey)):
                    confirmed.add(parse_verifier_key(str(vkey)).name)
            except (ViewError, CosignatureError):
                unknown.add(str(c.get("name")))
        return sorted(confirmed), sorted(unknown - confirmed)

    def compare(self, note: str) -> Equivocation | None:
        """Check a checkpoint note, from the server or from another player over any
        channel: signed under the root, and consistent with every tree verified before
        (the server proves it, ``ViewError`` if it cannot). Returns the
        :class:`Equivocation` if it states another tree for a size verified before (the
        note is then not kept); else keeps it."""
        size, root = self._open(note)
        for vkey in self.trusted:
            cosigned_by(note, vkey)  # a failing line of a known cosigner: ViewError
        kept = self.trees.get(size)
        if kept is not None:
            return Equivocation(size=size, first=kept[1], second=note) if kept[0] != root else None
        for old, (old_root, old_note) in sorted(self.trees.items()):
            if old == 0 or size == 0:
                continue
            low, high = sorted((old, size))
            low_root, high_root = (old_root, root) if old < size else (root, old_root)
            proof = self.dice.call(
                "GET",
                f"/v1/tables/{self.table}/proofs/consistency",
                params={"from": low, "to": high},
            )["proof"]
            try:
                verify_consistency(low, high, low_root, high_root, [_b64(h) for h in proof])
            except ViewError as exc:
                raise ViewError(
                    f"the checkpoint of size {size} is not consistent with the one of size "
                    f"{old} verified before ({exc}): keep both notes\n{old_note}\n{note}"
                ) from None
        self.trees[size] = (root, _plain(note))
        return None

    def _open(self, note: str) -> tuple[int, bytes]:
        keys = trusted_keys(self.dice.keys(), self.root)
        origin = note.split("\n", 1)[0]
        if not origin.endswith(f"/{self.table}"):
            raise ViewError(f"the note is not of table {self.table}")
        return open_checkpoint(note, origin, keys)


def _plain(note: str) -> str:
    """The note with only the log's own signature lines (no one's cosignatures)."""
    body, signatures = _split(note)
    name = body.split("\n", 1)[0].rsplit("/", 1)[0]
    own = [line for line in signatures if _log_line(line, name)]
    return body + "\n" + "".join(line + "\n" for line in own)


def _split(note: str) -> tuple[str, list[str]]:
    body, blank, rest = note.partition("\n\n")
    if not blank:
        raise ViewError("a note is its text, a blank line, then signature lines")
    return body + "\n", [line for line in rest.split("\n") if line]


def _log_line(line: str, name: str) -> bool:
    """A signature line of the log itself (its key name, an Ed25519 note signature)."""
    prefix = f"\u2014 {name} "
    try:
        raw = base64.b64decode(line[len(prefix) :], validate=True)
    except (ValueError, binascii.Error):
        return False
    return line.startswith(prefix) and len(raw) == 68


def _b64(value: str) -> bytes:
    return base64.b64decode(value, validate=True)
