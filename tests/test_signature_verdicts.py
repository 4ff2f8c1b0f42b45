"""An entry's signature is checked by libsodium first (faster), but the verdict is
``cryptography``'s, on every signature: libsodium's yes is final only because what it
accepts ``cryptography`` accepts too, and its no is asked again. The signatures the two
judge differently (a small-order key or point: ``cryptography`` accepts them, libsodium
does not) are answered as ``cryptography`` answers them; forged, flipped and malformed
ones alike."""

from __future__ import annotations

import base64

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from fairroll.audit import signing
from fairroll.audit.signing import verify_message

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes([1]) + bytes(31)  # the neutral point: order 1
ORDER_2 = (P - 1).to_bytes(32, "little")  # y = -1: order 2
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
RAW = KEY.public_key().public_bytes_raw()
MESSAGE = b"fairroll/entry/v1\nsha256:" + b"ab" * 32
GOOD = KEY.sign(MESSAGE)


def cryptographys(raw: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_libsodium_is_asked_first() -> None:
    """PyNaCl is a dependency: without it every check would take the slow path."""
    assert signing._sodium_open is not None


@pytest.mark.parametrize(
    ("raw", "message", "signature"),
    [
        pytest.param(RAW, MESSAGE, GOOD, id="good"),
        pytest.param(RAW, MESSAGE + b"x", GOOD, id="another message"),
        pytest.param(IDENTITY, MESSAGE, IDENTITY + bytes(32), id="small-order key and point"),
        pytest.param(ORDER_2, MESSAGE, IDENTITY + bytes(32), id="order-2 key, neutral point"),
        pytest.param(
            RAW,
            MESSAGE,
            GOOD[:32] + (int.from_bytes(GOOD[32:], "little") + L).to_bytes(32, "little"),
            id="S not reduced",
        ),
        pytest.param((P + 1).to_bytes(32, "little"), MESSAGE, GOOD, id="key not canonical"),
        pytest.param(RAW, MESSAGE, GOOD[:63], id="short signature"),
        pytest.param(RAW, MESSAGE, GOOD + b"\0", id="long signature"),
        pytest.param(RAW[:31], MESSAGE, GOOD, id="short key"),
    ],
)
def test_the_verdict_is_cryptographys(raw: bytes, message: bytes, signature: bytes) -> None:
    assert verify_message(b64(raw), message, signature) is cryptographys(raw, message, signature)


def test_a_small_order_signature_libsodium_refuses_is_still_cryptographys_yes() -> None:
    assert cryptographys(IDENTITY, MESSAGE, IDENTITY + bytes(32))
    assert verify_message(b64(IDENTITY), MESSAGE, IDENTITY + bytes(32))


@settings(max_examples=300, deadline=None)
@given(
    part=st.sampled_from(["key", "message", "signature"]),
    bit=st.integers(min_value=0, max_value=8 * 64 - 1),
)
def test_a_flipped_bit_is_judged_as_cryptography_judges_it(part: str, bit: int) -> None:
    raw, message, signature = bytearray(RAW), bytearray(MESSAGE), bytearray(GOOD)
    target = {"key": raw, "message": message, "signature": signature}[part]
    target[(bit // 8) % len(target)] ^= 1 << (bit % 8)
    got = verify_message(b64(bytes(raw)), bytes(message), bytes(signature))
    assert got is cryptographys(bytes(raw), bytes(message), bytes(signature))
