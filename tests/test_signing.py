"""A signer signs the same bytes whichever Ed25519 implementation it runs on: libsodium
(PyNaCl, a dependency of the service: faster; the vendored client core may lack it) or
OpenSSL through ``cryptography``. Ed25519 is deterministic (RFC 8032), so a verifier
cannot tell, and must not need to."""

from __future__ import annotations

import base64
import importlib
import os

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import signing
from fairroll.audit.signing import Signer, verify_signature


def test_libsodium_signs_the_very_bytes_openssl_signs() -> None:
    importlib.import_module("nacl.bindings")  # a service dependency: never skipped
    for _ in range(50):
        private = Ed25519PrivateKey.from_private_bytes(os.urandom(32))
        signer = Signer(private)
        for size in (0, 1, 64, 1000):
            message = os.urandom(size)
            assert signer.sign_message(message) == base64.b64encode(private.sign(message)).decode()


def test_without_libsodium_the_signer_signs_with_openssl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.import_module

    def no_sodium(name: str, package: str | None = None) -> object:
        if name.startswith("nacl"):
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(signing.importlib, "import_module", no_sodium)
    signer = Signer.generate()
    entry_hash = "ab" * 32
    assert verify_signature(signer.public_key.public_key, entry_hash, signer.sign(entry_hash))
