"""The public keys that sign audit entries."""

from __future__ import annotations

import msgspec
from litestar import Controller, get

from fairroll.audit import (
    AuditStore,
    PublicKey,
)
from fairroll.audit.checkpoint import note_key

__all__ = ["KeyList", "KeysController"]


class KeyList(msgspec.Struct, frozen=True, kw_only=True):
    """Every public key that has signed entries, by key id; a convenience, not a trust
    anchor: each table's log publishes its keys under ``root`` (pin that fingerprint)."""

    root: str
    keys: list[PublicKey]


class KeysController(Controller):
    path = "/v1/keys"
    tags = ("audit",)

    @get(operation_id="listPublicKeys", summary="The public keys that sign audit entries")
    async def list_keys(self, store: AuditStore) -> KeyList:
        keys = await store.public_keys()
        return KeyList(
            root=store.root_key_id,
            keys=[
                msgspec.structs.replace(key, note_key=note_key(store.log_name, key.public_key))
                for key in keys
            ],
        )
