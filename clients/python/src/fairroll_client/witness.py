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

The server relays cosignatures and could drop some, so :meth:`TableWitness.compare`
takes a note from another player over a channel the operator does not run (a VTT's
own messages), and :attr:`Checked.confirmed_by` is empty while no other player has
cosigned this tree: the view is then *unconfirmed*. ``state()`` is what to keep between
runs (JSON: the key and the trees verified).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

if TYPE_CHECKING:
    from fairroll_client.client import Fairroll

__all__ = [
    "Checked",
    "Equivocation",
    "EquivocationError",
    "TableWitness",
    "ViewError",
    "cosign_note",
    "open_checkpoint",
    "trusted_keys",
    "verify_consistency",
]

#: What a key certificate signs: this, then the key id and the public key (docs/audit.md).
CERTIFICATE_CONTEXT = b"fairroll/key/v1\n"
_COSIGNATURE = b"cosignature/v1\n"


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
    """A checkpoint this witness verified and cosigned: its tree, and who else cosigned
    that very tree (the note's cosignature lines and ``GET .../cosignatures``)."""

    size: int
    root_hash: str
    note: str
    cosigned: str
    confirmed_by: list[str] = field(default_factory=list)

    @property
    def unconfirmed(self) -> bool:
        """No other player or witness has cosigned this tree (yet): the server could be
        showing this player a view of its own."""
        return not self.confirmed_by


def trusted_keys(published: Mapping[str, Any], root: str) -> dict[str, bytes]:
    """The keys of a ``GET /v1/keys`` answer whose certificate the pinned ``root``
    signed: key_id -> raw Ed25519 public key. Any other key is left out."""
    trusted: dict[str, bytes] = {}
    for key in published.get("keys", []):
        certificate = key.get("certificate") if isinstance(key, Mapping) else None
        if not isinstance(certificate, Mapping):
            continue
        try:
            raw = base64.b64decode(certificate["public_key"], validate=True)
            root_raw = base64.b64decode(certificate["root_public_key"], validate=True)
            signature = base64.b64decode(certificate["signature"], validate=True)
            message = (
                CERTIFICATE_CONTEXT
                + f"{certificate['key_id']}\n{certificate['public_key']}\n".encode()
            )
            Ed25519PublicKey.from_public_bytes(root_raw).verify(signature, message)
        except (KeyError, TypeError, ValueError, binascii.Error, InvalidSignature):
            continue
        if (
            _key_id(raw) == certificate["key_id"] == key.get("key_id")
            and _key_id(root_raw) == certificate["certified_by"] == root
            and certificate["public_key"] == key.get("public_key")
        ):
            trusted[certificate["key_id"]] = raw
    return trusted


def open_checkpoint(note: str, origin: str, keys: Mapping[str, bytes]) -> tuple[int, bytes]:
    """(size, root) of a checkpoint note of ``origin`` signed by one of ``keys``; the
    note's key name is the origin's log name (``<log name>/<table>``)."""
    body, signatures = _split(note)
    lines = body.split("\n")
    if lines[0] != origin or len(lines) < 4:
        raise ViewError(f"the note is not a checkpoint of {origin}")
    name = origin.rsplit("/", 1)[0]
    for raw in keys.values():
        want = hashlib.sha256(name.encode() + b"\n\x01" + raw).digest()[:4]
        for line in signatures:
            signature = _line_signature(line, name)
            if signature is None or len(signature) != 68 or signature[:4] != want:
                continue
            try:
                Ed25519PublicKey.from_public_bytes(raw).verify(signature[4:], body.encode())
            except InvalidSignature:
                continue
            try:
                return int(lines[1]), base64.b64decode(lines[2], validate=True)
            except (ValueError, binascii.Error):
                raise ViewError("the note's size or root does not parse") from None
    raise ViewError("the note carries no signature by a key the pinned root certified")


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 section 2.1.4.2: the tree of ``old`` leaves is a prefix of ``new``'s."""
    if not 0 <= old <= new:
        raise ViewError(f"the log shrank from {old} to {new} entries")
    if old == new:
        if proof or old_root != new_root:
            raise ViewError(f"two different trees of size {old}")
        return
    if old == 0:
        return
    path = list(proof)
    if not path:
        raise ViewError("the consistency proof is empty")
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ViewError("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr, sr = _node(c, fr), _node(c, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ViewError("the consistency proof is too short")
    if fr != old_root or sr != new_root:
        raise ViewError("the log is not consistent with the tree verified before: rewritten")


def cosign_note(note: str, name: str, key: Ed25519PrivateKey, timestamp: int) -> str:
    """``note`` with ``name``'s C2SP cosignature (``cosignature/v1``) line added."""
    body, _ = _split(note)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    message = _COSIGNATURE + f"time {timestamp}\n".encode() + body.encode()
    stamped = _cosigner_id(name, raw) + timestamp.to_bytes(8, "big") + key.sign(message)
    return note + f"\u2014 {name} {base64.b64encode(stamped).decode()}\n"


def verifier_key(name: str, raw: bytes) -> str:
    """A cosigner's verifier key: ``<name>+<key ID hex>+base64(0x04 || key)``."""
    encoded = base64.b64encode(b"\x04" + raw).decode()
    return f"{name}+{_cosigner_id(name, raw).hex()}+{encoded}"


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
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.dice = dice
        self.table = table
        self.name = name
        self.key = key
        self.root = root
        self.clock = clock
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.vkey = verifier_key(name, raw)
        #: Every tree verified, by size: (root, its note).
        self.trees: dict[int, tuple[bytes, str]] = {
            int(t["size"]): (base64.b64decode(t["root_hash"]), str(t["note"])) for t in trees
        }

    @classmethod
    def new(cls, dice: Fairroll, table: str, *, name: str, root: str) -> TableWitness:
        """A witness with a fresh Ed25519 key (keep ``state()`` to go on with it)."""
        return cls(dice, table, name=name, key=Ed25519PrivateKey.generate(), root=root)

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
        others = sorted(
            {
                str(c["name"])
                for c in listed.get("cosignatures", [])
                if c.get("vkey") != self.vkey
                and c.get("size") == size
                and c.get("root_hash") == root_hash
            }
        )
        return Checked(
            size=size, root_hash=root_hash, note=note, cosigned=cosigned, confirmed_by=others
        )

    def compare(self, note: str) -> Equivocation | None:
        """Check a checkpoint note, from the server or from another player over any
        channel: signed under the root, and consistent with every tree verified before
        (the server proves it, ``ViewError`` if it cannot). Returns the
        :class:`Equivocation` if it states another tree for a size verified before (the
        note is then not kept); else keeps it."""
        size, root = self._open(note)
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
    own = [line for line in signatures if len(_line_signature(line, name) or b"") == 68]
    return body + "\n" + "".join(line + "\n" for line in own)


def _split(note: str) -> tuple[str, list[str]]:
    body, blank, rest = note.partition("\n\n")
    if not blank:
        raise ViewError("a note is its text, a blank line, then signature lines")
    return body + "\n", [line for line in rest.split("\n") if line]


def _line_signature(line: str, name: str) -> bytes | None:
    prefix = f"\u2014 {name} "
    if not line.startswith(prefix):
        return None
    try:
        return base64.b64decode(line[len(prefix) :], validate=True)
    except (ValueError, binascii.Error):
        return None


def _cosigner_id(name: str, raw: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n\x04" + raw).digest()[:4]


def _key_id(raw: bytes) -> str:
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _b64(value: str) -> bytes:
    return base64.b64decode(value, validate=True)
