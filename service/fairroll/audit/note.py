"""Signed notes (C2SP ``signed-note``), shaped like Go's ``golang.org/x/mod/sumdb/note``.

A note is a text (lines, each ending in a newline), a blank line, then signature lines::

    \\u2014 <key name> <base64(key hash || signature)>\\n

One :class:`Verifier` per key: its name, its 4-byte key hash (``SHA-256(name || "\\n" ||
type || public key)[:4]``) and ``verify(text, signature)``. :func:`open_note` takes a note
and the verifiers the caller trusts, and returns the :class:`Note` with its verified and
its unverified signatures. A line whose name and key hash are a known verifier's must
verify: one that fails rejects the whole note, whether a good line of that key came
before it or after (Go reads only a key's first line; C2SP asks a verifier to reject a
note a known key's signature fails for, so a forged second line is never passed over).
A note with no verified signature is refused too. Lines of unknown keys are kept as
unverified, as Go keeps them. Each refusal is a :class:`NoteError` of its own type, as
Go's are (``InvalidSignatureError``, ``UnverifiedNoteError``, a malformed note), so a
caller tells them apart by type, never by the words.

Two key types, both Ed25519: a log's signer (``0x01``: the signature is over the text)
and a cosigner (``0x04``, C2SP ``tlog-cosignature`` ``cosignature/v1``: the signature is
an 8-byte big-endian time, then Ed25519 over ``"cosignature/v1\\ntime <t>\\n" || text``).

>>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
>>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
>>> raw = key.public_key().public_bytes_raw()
>>> text = "example.com/log\\n1\\n" + "A" * 43 + "=\\n"
>>> signer = SignerVerifier("example.com/log", raw)
>>> line = signature_line(signer.name, signer.key_hash, key.sign(text.encode()))
>>> note = open_note(text + "\\n" + line + "\\n", [signer])
>>> [s.name for s in note.sigs], note.unverified
(['example.com/log'], ())
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = [
    "COSIGNATURE_TYPE",
    "SIGNER_TYPE",
    "CosignerVerifier",
    "InvalidSignatureError",
    "MalformedNoteError",
    "Note",
    "NoteError",
    "Signature",
    "SignerVerifier",
    "UnverifiedNoteError",
    "Verifier",
    "key_hash",
    "open_note",
    "signature_line",
]

#: The key type byte of a log's Ed25519 signer, and of an Ed25519 cosigner.
SIGNER_TYPE = 0x01
COSIGNATURE_TYPE = 0x04
#: Go's cap on a note's signature lines.
MAX_SIGNATURES = 100
#: What C2SP forbids in a note (it "MUST be valid UTF-8 and MUST NOT contain any ASCII
#: control characters ... other than newline"): a control character, or a lone surrogate
#: (a JSON escape can put one in a string; it has no UTF-8 spelling).
_NOT_TEXT = re.compile(r"[\x00-\x09\x0b-\x1f\ud800-\udfff]")
#: A key name holds no Unicode space (Go's ``unicode.IsSpace``; the control ones are
#: refused with the whole note) and no "+".
_LINE = re.compile(
    r"^\u2014 (?P<name>[^ +\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+)"
    r" (?P<signature>[A-Za-z0-9+/=]+)$"
)
#: Standard base64 (RFC 4648 section 4), whole padded quads, as Go's ``StdEncoding`` reads
#: it (the stdlib's strict mode takes padding past the last quad).
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_COSIGNATURE = b"cosignature/v1\n"


class NoteError(ValueError):
    """A note that does not open, in words; the subclass says which way."""


class MalformedNoteError(NoteError):
    """Not a note: no blank line before the signatures, a line that is no signature
    line, a signature that is not base64, too many lines (or, for a checkpoint, a body
    that is not one)."""


class InvalidSignatureError(NoteError):
    """A signature line of a known key (``name``) that does not verify: the note is
    rejected, whatever other line of that key verified."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


class UnverifiedNoteError(NoteError):
    """A well-formed note that no known key signed."""


class Verifier(Protocol):
    """One key a note may be signed with."""

    @property
    def name(self) -> str: ...
    @property
    def key_hash(self) -> bytes: ...
    def verify(self, text: bytes, signature: bytes) -> bool: ...


@dataclass(frozen=True, slots=True)
class Signature:
    """A signature line: its key's name and hash, and the signature (after the hash)."""

    name: str
    key_hash: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Note:
    """An opened note: its text, the signatures of known keys (each verified, one per
    key) and those of keys the caller did not name."""

    text: str
    sigs: tuple[Signature, ...]
    unverified: tuple[Signature, ...]


def key_hash(name: str, key_type: int, raw_public_key: bytes) -> bytes:
    """``SHA-256(name || "\\n" || type || key)[:4]``."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([key_type]) + raw_public_key).digest()[:4]


@dataclass(frozen=True, slots=True)
class SignerVerifier:
    """A log's Ed25519 signer (type ``0x01``): the signature is over the text."""

    name: str
    public_key: bytes

    @property
    def key_hash(self) -> bytes:
        return key_hash(self.name, SIGNER_TYPE, self.public_key)

    def verify(self, text: bytes, signature: bytes) -> bool:
        return len(signature) == 64 and _ed25519(self.public_key, signature, text)


@dataclass(frozen=True, slots=True)
class CosignerVerifier:
    """An Ed25519 cosigner (type ``0x04``, ``cosignature/v1``): the signature is its time
    (8 bytes, below 2**63), then Ed25519 over the header, the time line and the text."""

    name: str
    public_key: bytes

    @property
    def key_hash(self) -> bytes:
        return key_hash(self.name, COSIGNATURE_TYPE, self.public_key)

    def verify(self, text: bytes, signature: bytes) -> bool:
        if len(signature) != 72:
            return False
        timestamp = int.from_bytes(signature[:8], "big")
        message = _COSIGNATURE + f"time {timestamp}\n".encode() + text
        return timestamp < 2**63 and _ed25519(self.public_key, signature[8:], message)


def signature_line(name: str, hash_: bytes, signature: bytes) -> str:
    """A note's signature line (without its newline)."""
    return f"\u2014 {name} {base64.b64encode(hash_ + signature).decode()}"


def open_note(note: str, verifiers: Iterable[Verifier]) -> Note:
    """The note, its signatures checked by ``verifiers``; ``MalformedNoteError`` if it is
    not a note (C2SP's shape and Go's ``note.Open`` rules: text with no control character
    but newline, a blank line, at most 100 lines ``\u2014 <name> <base64>``, a name with
    no space or "+", the base64 standard and padded), ``InvalidSignatureError`` if a
    known key's signature line fails, ``UnverifiedNoteError`` if no known key signed it."""
    if _NOT_TEXT.search(note):
        raise MalformedNoteError("a note is UTF-8 text with no control character but newline")
    text, blank, block = note.rpartition("\n\n")
    if not blank or not text or not block.endswith("\n"):
        raise MalformedNoteError("a note is its text, a blank line, then signature lines")
    text += "\n"
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise MalformedNoteError(f"a note has at most {MAX_SIGNATURES} signature lines")
    known = {(v.name, v.key_hash): v for v in verifiers}
    sigs: dict[tuple[str, bytes], Signature] = {}
    unverified: list[Signature] = []
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            raise MalformedNoteError(f"not a signature line: {line!r}")
        if _BASE64.fullmatch(match["signature"]) is None:
            raise MalformedNoteError("a signature is not base64")
        raw = base64.b64decode(match["signature"])
        if len(raw) < 5:
            raise MalformedNoteError("a signature line holds a key hash and a signature")
        signature = Signature(name=match["name"], key_hash=raw[:4], signature=raw[4:])
        verifier = known.get((signature.name, signature.key_hash))
        if verifier is None:
            unverified.append(signature)
        elif not verifier.verify(text.encode(), signature.signature):
            raise InvalidSignatureError(
                f"{signature.name}'s signature does not verify", signature.name
            )
        else:
            sigs.setdefault((signature.name, signature.key_hash), signature)
    if not sigs:
        raise UnverifiedNoteError("the note carries no signature by a known key")
    return Note(text=text, sigs=tuple(sigs.values()), unverified=tuple(unverified))


def _ed25519(public_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True
