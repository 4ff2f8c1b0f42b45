"""C2SP tlog-cosignature (``cosignature/v1``, Ed25519): a player's or a witness's
statement that it verified a checkpoint, as a signed-note signature line.

A cosigner with name ``name`` and Ed25519 key ``k`` cosigns a checkpoint note at POSIX
time ``t`` (https://c2sp.org/tlog-cosignature)::

    key ID   = SHA-256(name || "\\n" || 0x04 || k)[:4]
    message  = "cosignature/v1\\n" || "time " || decimal(t) || "\\n" || the note's body
               (every line before the blank one, each with its newline)
    line     = "— " || name || " " || base64(key ID || u64be(t) || Ed25519(k, message))
    vkey     = name || "+" || hex(key ID) || "+" || base64(0x04 || k)

Semantically: as of ``t``, the largest consistent tree the cosigner has seen of the log
named by the note's origin is the one the note states. Two cosigners who saw two trees
of one size have, between their two notes, a proof of equivocation.

>>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
>>> key = Ed25519PrivateKey.generate()
>>> body = "fairroll/t\\n1\\n" + "A" * 43 + "=\\n"
>>> line = cosign(body + "\\n— fairroll AAAAAAAA\\n", "player.example/roth", key, 1700000000)
>>> vkey = verifier_key("player.example/roth", raw_public_key(key))
>>> open_cosignature(body + "\\n— fairroll AAAAAAAA\\n" + line + "\\n", vkey)
1700000000
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import note as signed_note

__all__ = [
    "COSIGNATURE_TYPE",
    "CosignatureError",
    "Cosigner",
    "ForgedCosignatureError",
    "NoCosignatureError",
    "VerifierKeyError",
    "cosign",
    "key_id",
    "note_body",
    "open_cosignature",
    "parse_verifier_key",
    "raw_public_key",
    "verifier_key",
]

#: The signature type byte of an Ed25519 cosignature key (0x01 is a note signer's).
COSIGNATURE_TYPE = signed_note.COSIGNATURE_TYPE
_HEADER = b"cosignature/v1\n"
_NAME = re.compile(r"^[^ +\n]{1,255}$")


class CosignatureError(ValueError):
    """A cosignature or verifier key that does not hold, in words; the subclass says
    which (a caller picks its answer by type, never by the words)."""


class VerifierKeyError(CosignatureError):
    """A verifier key that is not an Ed25519 cosigner's, or whose key ID is not its."""


class ForgedCosignatureError(CosignatureError):
    """A cosignature line of the key that does not verify: the note is rejected, even
    if another line of that key verifies."""


class NoCosignatureError(CosignatureError):
    """The note carries no cosignature line of the key."""


@dataclass(frozen=True, slots=True)
class Cosigner:
    """A cosigner's name and its 32-byte Ed25519 public key, from its ``vkey``."""

    name: str
    public_key: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.name, self.public_key)

    @property
    def vkey(self) -> str:
        return verifier_key(self.name, self.public_key)


def key_id(name: str, public_key: bytes) -> bytes:
    """``SHA-256(name || "\\n" || 0x04 || key)[:4]``."""
    return signed_note.key_hash(name, COSIGNATURE_TYPE, public_key)


def verifier_key(name: str, public_key: bytes) -> str:
    """The cosigner's signed-note verifier key: ``name+<key ID hex>+base64(0x04 || key)``."""
    encoded = base64.b64encode(bytes([COSIGNATURE_TYPE]) + public_key).decode()
    return f"{name}+{key_id(name, public_key).hex()}+{encoded}"


def parse_verifier_key(vkey: str) -> Cosigner:
    """A ``verifier_key`` read back; ``VerifierKeyError`` unless it is an Ed25519
    cosignature key whose key ID matches its name and key."""
    name, _, rest = vkey.partition("+")
    hash_hex, _, encoded = rest.partition("+")
    if not _NAME.match(name) or not hash_hex or not encoded:
        raise VerifierKeyError("a verifier key is <name>+<key ID hex>+<base64 key>")
    try:
        raw = base64.b64decode(encoded, validate=True)
        want = bytes.fromhex(hash_hex)
    except (binascii.Error, ValueError):
        raise VerifierKeyError("a verifier key's key ID is hex and its key base64") from None
    if len(raw) != 33 or raw[0] != COSIGNATURE_TYPE:
        raise VerifierKeyError("not an Ed25519 cosignature key (type 0x04, 32 bytes)")
    cosigner = Cosigner(name, raw[1:])
    if cosigner.key_id != want:
        raise VerifierKeyError("the verifier key's key ID is not its name's and key's")
    return cosigner


def raw_public_key(private: Ed25519PrivateKey) -> bytes:
    return private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def note_body(note: str) -> str:
    """The body of a signed note: every line before the blank one, each with its newline."""
    body, blank, _ = note.partition("\n\n")
    if not blank:
        raise CosignatureError("a note is its text, a blank line, then signature lines")
    return body + "\n"


def cosign(note: str, name: str, private: Ed25519PrivateKey, timestamp: int) -> str:
    """The signature line of ``name``'s cosignature of ``note`` at POSIX ``timestamp``."""
    if not 0 <= timestamp < 2**63:
        raise CosignatureError("a cosignature's time is 0 to 2**63 - 1")
    if not _NAME.match(name):
        raise CosignatureError("a cosigner's name has no space, '+' or newline")
    message = _message(note_body(note), timestamp)
    signature = private.sign(message)
    hash_ = key_id(name, raw_public_key(private))
    return signed_note.signature_line(name, hash_, timestamp.to_bytes(8, "big") + signature)


def open_cosignature(note: str, vkey: str) -> int:
    """The time of the cosignature of ``note`` by the cosigner of ``vkey`` (a signature
    line of the note); ``NoCosignatureError`` if it has none, ``ForgedCosignatureError``
    if a line of that key does not verify (``note.open_note``: even after a good one),
    ``VerifierKeyError`` for a bad ``vkey``, ``CosignatureError`` if it is no note."""
    cosigner = parse_verifier_key(vkey)
    try:
        opened = signed_note.open_note(
            note, [signed_note.CosignerVerifier(cosigner.name, cosigner.public_key)]
        )
    except signed_note.InvalidSignatureError:
        raise ForgedCosignatureError(f"{cosigner.name}'s cosignature does not verify") from None
    except signed_note.UnverifiedNoteError:
        raise NoCosignatureError(f"the note carries no cosignature by {cosigner.name}") from None
    except signed_note.NoteError as exc:
        raise CosignatureError(str(exc)) from None
    return int.from_bytes(opened.sigs[0].signature[:8], "big")


def _message(body: str, timestamp: int) -> bytes:
    return _HEADER + f"time {timestamp}\n".encode() + body.encode()
