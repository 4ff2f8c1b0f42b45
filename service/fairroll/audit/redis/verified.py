"""Where the server's own verification of a table stopped, kept so the next one goes on
from there (``play.verification``) instead of reading the whole log again.

The state is signed by the server's key (a state written into Redis by anyone else, or
by a key since rotated, is not taken: verification then starts over from seq 1), and
it is only a head start: the entries after it must chain on it, or it is dropped and
the log verified from the start. A state larger than ``MAX_BYTES`` (a version 1 log's
every nonce, or many unrevealed commit-reveal rolls) is not kept.
"""

from __future__ import annotations

import base64
import hashlib

import msgspec

from fairroll.audit.keyspace import verified_key
from fairroll.audit.redis.connection import AnyRedis
from fairroll.audit.signing import Signer, verify_message
from fairroll.audit.verify import VerifiedState

__all__ = ["MAX_BYTES", "VerifiedStates"]

MAX_BYTES = 4 * 1024 * 1024
_CONTEXT = b"fairroll/verified-state/v1\n"


class _Kept(msgspec.Struct, frozen=True, kw_only=True):
    key_id: str
    #: base64 Ed25519 signature of the context and the SHA-256 of ``state``.
    signature: str
    state: msgspec.Raw


_decoder = msgspec.json.Decoder(_Kept)
_state_decoder = msgspec.json.Decoder(VerifiedState)


class VerifiedStates:
    def __init__(self, redis: AnyRedis, signer: Signer) -> None:
        self.redis = redis
        self.signer = signer

    async def load(self, table: str) -> VerifiedState | None:
        """The state kept for ``table``, if this server's key signed it."""
        raw = await self.redis.get(verified_key(table))
        if raw is None:
            return None
        try:
            kept = _decoder.decode(raw)
            signature = base64.b64decode(kept.signature, validate=True)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
            return None
        own = self.signer.public_key
        message = _CONTEXT + hashlib.sha256(bytes(kept.state)).digest()
        if kept.key_id != own.key_id or not verify_message(own.public_key, message, signature):
            return None
        try:
            return _state_decoder.decode(bytes(kept.state))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    async def keep(self, table: str, state: VerifiedState) -> bool:
        """Keep ``state`` (signed); False when it is too large to keep."""
        body = msgspec.json.encode(state)
        if len(body) > MAX_BYTES:
            await self.redis.delete(verified_key(table))
            return False
        signature = self.signer.sign_message(_CONTEXT + hashlib.sha256(body).digest())
        kept = _Kept(key_id=self.signer.key_id, signature=signature, state=msgspec.Raw(body))
        await self.redis.set(verified_key(table), msgspec.json.encode(kept))
        return True

    async def drop(self, table: str) -> None:
        await self.redis.delete(verified_key(table))
