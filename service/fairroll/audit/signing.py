"""Ed25519 signing keys: loading, key ids, signing and checking entry hashes."""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib
import os
from collections.abc import Callable
from pathlib import Path

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from fairroll.audit.entry import (
    ENTRY_VERSION,
    Body,
    Draft,
    Entry,
    Head,
    KeyCertificate,
    chain_hash,
    signed_message,
)

__all__ = [
    "CERTIFICATE_CONTEXT",
    "NO_KEY",
    "CertificateError",
    "KeyCertificate",
    "KeyNotConfiguredError",
    "PublicKey",
    "Signer",
    "certificate_message",
    "certify",
    "key_id_of",
    "load_signer",
    "private_key_of",
    "seal",
    "verify_certificate",
    "verify_message",
    "verify_signature",
]


class CertificateError(ValueError):
    """A key certificate that is not one, or not of this key (``FAIRROLL_KEY_CERTIFICATE``):
    its own type, so a caller names the certificate without matching words."""


class PublicKey(msgspec.Struct, frozen=True, kw_only=True):
    """A public key as served by ``GET /v1/keys``: raw 32 bytes, base64, and the window in
    which it signs: from its first use (``not_before``) until it is retired (``not_after``,
    null while in use). Entries keep verifying with it after it is retired."""

    key_id: str
    algorithm: str = "Ed25519"
    public_key: str
    not_before: str | None = None
    not_after: str | None = None
    #: The key as signed-note tools take it (checkpoints): ``name+hash+base64``.
    note_key: str | None = None
    #: The root's certificate of the key (a root certifies itself), so a verifier trusts a
    #: rotated key from the pinned root alone, even on a table that has not logged it yet.
    certificate: KeyCertificate | None = None


#: What a root key signs to certify a signing key: this, the key id, a newline, the base64
#: public key, a newline.
CERTIFICATE_CONTEXT = b"fairroll/key/v1\n"


def certificate_message(key_id: str, public_key: str) -> bytes:
    return CERTIFICATE_CONTEXT + f"{key_id}\n{public_key}\n".encode()


class Signer:
    """Holds the server's private key; signs entry hashes."""

    __slots__ = ("_private", "_sign", "certificate", "key_id", "public_key")

    def __init__(
        self, private: Ed25519PrivateKey, certificate: KeyCertificate | None = None
    ) -> None:
        self._private = private
        self._sign = _sodium_signer(private) or private.sign
        raw = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.key_id = key_id_of(raw)
        self.public_key = PublicKey(key_id=self.key_id, public_key=base64.b64encode(raw).decode())
        if certificate is None:  # a root: it certifies itself
            certificate = certify(self, self.public_key.public_key)
        if certificate.key_id != self.key_id or not verify_certificate(certificate):
            raise CertificateError("the key certificate is not a valid certificate of this key")
        self.certificate = certificate

    @classmethod
    def generate(cls) -> Signer:
        return cls(Ed25519PrivateKey.generate())

    def sign(self, entry_hash: str) -> str:
        """Return the base64 signature of ``entry_hash``."""
        return self.sign_message(signed_message(entry_hash))

    def sign_message(self, message: bytes) -> str:
        """Return the base64 Ed25519 signature of ``message``."""
        return base64.b64encode(self._sign(message)).decode()

    def private_pem(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def _sodium_signer(private: Ed25519PrivateKey) -> Callable[[bytes], bytes] | None:
    """The key's signing function in libsodium (PyNaCl), when it is installed, else None.

    Ed25519 signatures are deterministic (RFC 8032): the same key signs the same message
    to the same bytes in any implementation, so nothing a verifier reads changes. Every
    roll signs twice (its entry and its round's checkpoint), and libsodium signs faster
    than OpenSSL through ``cryptography`` (measured in docs/performance.md, issue 40).
    The first signature is checked against ``cryptography``'s before it is used."""
    try:
        bindings = importlib.import_module("nacl.bindings")
    except ImportError:
        return None
    seed = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    _, secret = bindings.crypto_sign_seed_keypair(seed)
    sign = bindings.crypto_sign

    def signed(message: bytes) -> bytes:
        return bytes(sign(message, secret)[:_SIGNATURE_SIZE])

    probe = CERTIFICATE_CONTEXT + b"sodium\n"
    if signed(probe) != private.sign(probe):
        return None
    return signed


_SIGNATURE_SIZE = 64

#: The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): 12 bytes, then the key.
_SPKI_ED25519 = bytes.fromhex("302a300506032b6570032100")


def certify(root: Signer, public_key: str) -> KeyCertificate:
    """``root``'s certificate of the signing key ``public_key``: a raw 32-byte Ed25519
    public key in base64 (``public_key`` of ``GET /v1/keys``, or what ``keygen`` prints),
    and nothing else: a certificate of other bytes would name a key id no key has."""
    try:
        raw = base64.b64decode(public_key, validate=True)
    except ValueError:
        raise ValueError(f"{public_key!r} is not base64") from None
    if len(raw) == len(_SPKI_ED25519) + 32 and raw.startswith(_SPKI_ED25519):
        bare = base64.b64encode(raw[len(_SPKI_ED25519) :]).decode()
        raise ValueError(
            "this is an SPKI public key (what openssl pkey -pubout writes), not a raw "
            f"Ed25519 key; its raw key is {bare}"
        )
    if len(raw) != 32:
        raise ValueError(f"a raw Ed25519 public key is 32 bytes; this is {len(raw)}")
    key_id = key_id_of(raw)
    return KeyCertificate(
        key_id=key_id,
        public_key=public_key,
        certified_by=root.key_id,
        root_public_key=root.public_key.public_key,
        signature=root.sign_message(certificate_message(key_id, public_key)),
    )


def verify_certificate(certificate: KeyCertificate, root: str | None = None) -> bool:
    """True when the certificate is signed by its root key, names the key it certifies,
    and (given ``root``, a pinned key id) comes from that root."""
    try:
        raw = base64.b64decode(certificate.public_key, validate=True)
        root_raw = base64.b64decode(certificate.root_public_key, validate=True)
        signature = base64.b64decode(certificate.signature, validate=True)
    except ValueError:
        return False
    return (
        key_id_of(raw) == certificate.key_id
        and key_id_of(root_raw) == certificate.certified_by
        and (root is None or certificate.certified_by == root)
        and verify_message(
            certificate.root_public_key,
            certificate_message(certificate.key_id, certificate.public_key),
            signature,
        )
    )


def key_id_of(raw_public_key: bytes) -> str:
    """``ed25519:`` plus the first 16 hex digits of SHA-256 of the raw public key."""
    return "ed25519:" + hashlib.sha256(raw_public_key).hexdigest()[:16]


#: Why a process without a key refuses to start (or to write to the log).
NO_KEY = (
    "no signing key: set FAIRROLL_SIGNING_KEY (an Ed25519 key: PEM, or its 32-byte seed in "
    "base64) or FAIRROLL_SIGNING_KEY_FILE (a file holding one); every process of one server "
    "signs and verifies with that one key. 'fairroll new-key' makes one."
)


class KeyNotConfiguredError(ValueError):
    """No signing key is configured, and an ephemeral one was not asked for: each process
    would sign under its own root, and none of them could verify the others' entries."""

    def __init__(self) -> None:
        super().__init__(NO_KEY)


def load_signer(
    *,
    key: str | None,
    key_file: Path | None,
    dev_dir: Path | None,
    certificate: str | None = None,
    ephemeral: bool = False,
) -> Signer:
    """Load the signing key, in this order of preference.

    ``key``: a PEM (PKCS#8) private key, or the 32-byte Ed25519 seed in base64.
    ``key_file``: a file holding either form. ``dev_dir``: read or create
    ``signing-key.pem`` there (development: beside the embedded Redis data).
    With none of them, ``KeyNotConfiguredError``; or, with ``ephemeral`` (a process
    that signs nothing the log keeps, as writing the spec), a key of its own. ``certificate``: the
    JSON of a root's ``KeyCertificate`` of the key (a rotated key); without it the key
    is a root, certified by itself.
    """
    try:
        cert = None if not certificate else msgspec.json.decode(certificate, type=KeyCertificate)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CertificateError(f"the key certificate is not a certificate: {exc}") from None
    if key:
        return Signer(_parse_private(key.encode()), cert)
    if key_file is not None:
        return Signer(_parse_private(key_file.read_bytes()), cert)
    if dev_dir is not None:
        path = dev_dir / "signing-key.pem"
        if path.exists():
            return Signer(_parse_private(path.read_bytes()))
        signer = Signer.generate()
        dev_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(signer.private_pem())
        return signer
    if ephemeral:
        return Signer.generate()
    raise KeyNotConfiguredError


def seal(draft: Draft, head: Head, signer: Signer, time: str, *, publish: bool = False) -> Entry:
    """Chain ``draft`` onto ``head``: give it the next seq, hash it and sign it. With
    ``publish``, the entry carries the signer's certificate (its first in the table)."""
    body = Body(
        v=ENTRY_VERSION,
        table=draft.table,
        seq=head.seq + 1,
        time=time,
        mechanic=draft.mechanic,
        request=draft.request,
        source=draft.source,
        seed=draft.seed,
        dice=draft.dice,
        outcome=draft.outcome,
        session=draft.session,
        prev_hash=head.entry_hash,
        key_id=signer.key_id,
        certificate=signer.certificate if publish else None,
    )
    entry_hash = chain_hash(head.entry_hash, body)
    return Entry(
        **msgspec.structs.asdict(body), entry_hash=entry_hash, signature=signer.sign(entry_hash)
    )


def verify_signature(public_key_b64: str, entry_hash: str, signature_b64: str) -> bool:
    """True when ``signature_b64`` is a valid signature of ``entry_hash`` by the key."""
    try:
        signature = base64.b64decode(signature_b64, validate=True)
    except ValueError:
        return False
    return verify_message(public_key_b64, signed_message(entry_hash), signature)


def verify_message(public_key_b64: str, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` is the key's Ed25519 signature of ``message``.

    ``cryptography``'s answer is the verdict. libsodium (PyNaCl, when installed) is asked
    first, as it checks a signature in well under half the time (a verifier checks one
    an entry): what it accepts, ``cryptography`` accepts too (the same cofactorless
    equation over the same canonical encodings; libsodium refuses small-order keys and
    points besides), so its yes is final, and only its no is asked again."""
    if _sodium_accepts(public_key_b64, message, signature):
        return True
    try:
        _public_key(public_key_b64).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _sodium_opener() -> Callable[[bytes, bytes], bytes] | None:
    """libsodium's ``crypto_sign_open`` (signature then message, raw key), if installed."""
    try:
        bindings = importlib.import_module("nacl.bindings")
    except ImportError:
        return None
    opener: Callable[[bytes, bytes], bytes] = bindings.crypto_sign_open
    return opener


_sodium_open = _sodium_opener()


def _sodium_accepts(public_key_b64: str, message: bytes, signature: bytes) -> bool:
    """libsodium's yes (False: its no, or no libsodium, or not a key and signature's size)."""
    raw = _raw_key(public_key_b64)
    if _sodium_open is None or raw is None or len(signature) != _SIGNATURE_SIZE:
        return False
    try:
        _sodium_open(signature + message, raw)
    except Exception:  # a refusal, in whichever words: cryptography is asked
        return False
    return True


@functools.lru_cache(maxsize=64)
def _raw_key(public_key_b64: str) -> bytes | None:
    """A key's 32 raw bytes (None: not base64 of 32 bytes), read once."""
    try:
        raw = base64.b64decode(public_key_b64, validate=True)
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


@functools.lru_cache(maxsize=64)
def _public_key(public_key_b64: str) -> Ed25519PublicKey:
    """A key read once: a log holds a handful, and verifiers check every entry with one."""
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64, validate=True))


def private_key_of(data: bytes) -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM (PKCS#8) or its 32-byte seed in base64 (what a
    key file holds); ValueError otherwise."""
    return _parse_private(data)


def _parse_private(data: bytes) -> Ed25519PrivateKey:
    text = data.strip()
    if text.startswith(b"-----BEGIN"):
        key = serialization.load_pem_private_key(text, password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("the signing key must be an Ed25519 key")
        return key
    raw = base64.b64decode(text, validate=True)
    if len(raw) != 32:
        raise ValueError("a base64 signing key must decode to the 32-byte Ed25519 seed")
    return Ed25519PrivateKey.from_private_bytes(raw)
