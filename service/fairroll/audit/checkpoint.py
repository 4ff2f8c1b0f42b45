"""Signed checkpoints: C2SP ``tlog-checkpoint`` bodies in C2SP ``signed-note`` notes.

A checkpoint says: the table's log had ``size`` entries and its RFC 6962 Merkle tree
(``merkle``) had this root. Its text, byte for byte::

    <origin>\\n                   fairroll/<table>  (FAIRROLL_LOG_NAME/<table>)
    <size>\\n                     decimal, no leading zeros
    <root hash, base64>\\n        standard base64 of the 32-byte root
    chain <entry_hash>\\n         extension line: the hex entry_hash of seq <size>
                                 (64 zeros for size 0), where the next entry chains on
    \\n
    \\u2014 <key name> <base64(key hash || Ed25519 signature)>\\n

The signature is Ed25519 over the body (every line before the blank one, each with its
newline), exactly as ``golang.org/x/mod/sumdb/note`` signs a note. The key hash is the
first 4 bytes of ``SHA-256(key name || "\\n" || 0x01 || public key)``, and the verifier
key that tools take is ``<key name>+<key hash, 8 hex>+<base64(0x01 || public key)>``
(``GET /v1/keys``, field ``note_key``).
"""

from __future__ import annotations

import base64
import binascii

import msgspec

from fairroll.audit import note
from fairroll.audit.entry import GENESIS_HASH
from fairroll.audit.signing import Signer

__all__ = [
    "DEFAULT_LOG_NAME",
    "Checkpoint",
    "InvalidSignatureError",
    "MalformedNoteError",
    "NoteError",
    "UnverifiedNoteError",
    "checkpoint_body",
    "key_hash",
    "note_key",
    "open_note",
    "origin_of",
    "parse_body",
    "sign_checkpoint",
    "verify_checkpoint",
]

DEFAULT_LOG_NAME = "fairroll"


#: A note that is not a well-formed checkpoint signed by the expected key: the signed
#: note's errors, by type (``note``), with the checkpoint's words.
NoteError = note.NoteError
MalformedNoteError = note.MalformedNoteError
InvalidSignatureError = note.InvalidSignatureError
UnverifiedNoteError = note.UnverifiedNoteError


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A signed statement: ``table``'s log had ``size`` entries, Merkle root ``root_hash``
    (base64), the last with ``head_hash`` (hex). ``text`` is the note itself."""

    table: str
    origin: str
    size: int
    root_hash: str
    head_hash: str
    key_id: str
    key_name: str
    #: base64 of the note signature: the 4-byte key hash, then the Ed25519 signature.
    signature: str
    text: str
    #: An archive base only: the hashes of the complete subtrees the tree of ``size``
    #: leaves splits into, largest first (base64); they fold to ``root_hash``, so a
    #: verifier extends the tree from them without the archived entries.
    frontier: list[str] | None = None


def origin_of(table: str, log_name: str = DEFAULT_LOG_NAME) -> str:
    return f"{log_name}/{table}"


def checkpoint_body(origin: str, size: int, root: bytes, head_hash: str) -> str:
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\nchain {head_hash}\n"


def key_hash(name: str, raw_public_key: bytes) -> bytes:
    """The signed-note key hash of a log's signer: SHA-256(name || "\\n" || 0x01 || key)[:4]."""
    return note.key_hash(name, note.SIGNER_TYPE, raw_public_key)


def note_key(name: str, public_key_b64: str) -> str:
    """The verifier key of a signed-note Ed25519 key: ``name+hash+base64(0x01||key)``."""
    raw = base64.b64decode(public_key_b64)
    encoded = base64.b64encode(b"\x01" + raw).decode()
    return f"{name}+{key_hash(name, raw).hex()}+{encoded}"


def sign_checkpoint(
    signer: Signer,
    table: str,
    size: int,
    root: bytes,
    head_hash: str,
    *,
    log_name: str = DEFAULT_LOG_NAME,
    frontier: list[bytes] | None = None,
) -> Checkpoint:
    origin = origin_of(table, log_name)
    body = checkpoint_body(origin, size, root, head_hash)
    raw_key = base64.b64decode(signer.public_key.public_key)
    signature = key_hash(log_name, raw_key) + base64.b64decode(signer.sign_message(body.encode()))
    encoded = base64.b64encode(signature).decode()
    return Checkpoint(
        table=table,
        origin=origin,
        size=size,
        root_hash=base64.b64encode(root).decode(),
        head_hash=head_hash,
        key_id=signer.key_id,
        key_name=log_name,
        signature=encoded,
        text=f"{body}\n\u2014 {log_name} {encoded}\n",
        frontier=None if frontier is None else [base64.b64encode(h).decode() for h in frontier],
    )


def verify_checkpoint(checkpoint: Checkpoint, public_key_b64: str) -> bool:
    """True when the note verifies under the key and says what the JSON fields say."""
    try:
        size, root, head_hash = open_note(checkpoint.text, checkpoint.key_name, public_key_b64)
    except NoteError:
        return False
    return (
        checkpoint.origin == origin_of(checkpoint.table, checkpoint.key_name)
        and checkpoint.text.startswith(checkpoint.origin + "\n")
        and size == checkpoint.size
        and base64.b64encode(root).decode() == checkpoint.root_hash
        and head_hash == checkpoint.head_hash
    )


def open_note(text: str, name: str, public_key_b64: str) -> tuple[int, bytes, str]:
    """Check a checkpoint note's signature by ``name``'s key (``note.open_note``: a line
    of that key that fails rejects the note); return (size, root, head hash). Raises
    ``NoteError`` naming what is wrong."""
    try:
        raw_key = base64.b64decode(public_key_b64, validate=True)
    except binascii.Error:
        raise NoteError("the public key is not base64") from None
    try:
        opened = note.open_note(text, [note.SignerVerifier(name, raw_key)])
    except InvalidSignatureError:
        raise InvalidSignatureError("the checkpoint's signature does not verify", name) from None
    except UnverifiedNoteError:
        raise UnverifiedNoteError(f"the checkpoint carries no signature by key {name}") from None
    return parse_body(opened.text)


def parse_body(body: str) -> tuple[int, bytes, str]:
    lines = body[:-1].split("\n")
    if len(lines) < 3:
        raise MalformedNoteError("a checkpoint has an origin, a size and a root hash")
    size_text, root_text = lines[1], lines[2]
    if not size_text.isdigit() or (size_text != "0" and size_text.startswith("0")):
        raise MalformedNoteError(f"the size {size_text!r} is not a decimal number")
    try:
        root = base64.b64decode(root_text, validate=True)
    except binascii.Error:
        raise MalformedNoteError("the root hash is not base64") from None
    if len(root) != 32:
        raise MalformedNoteError("the root hash is not 32 bytes")
    head_hash = GENESIS_HASH
    for extension in lines[3:]:
        if extension.startswith("chain "):
            head_hash = extension[6:]
    return int(size_text), root, head_hash
