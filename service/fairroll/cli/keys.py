"""``fairroll keygen``, ``certify-key`` and ``retire-key``: the signing keys' life."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fairroll.cli.operator import operator_store

if TYPE_CHECKING:
    from fairroll.cli.parsing import AddParser

__all__ = ["add_certify_key", "add_new_key", "add_retire_key"]


def add_retire_key(add_parser: AddParser) -> None:
    keys = add_parser("retire-key", help="retire a signing key (uses REDIS_URL)")
    keys.add_argument("key_id", help="the key id, e.g. ed25519:9f3a00cc8670da8e")
    keys.set_defaults(run=lambda a: _retire_key(a.key_id))


def add_new_key(add_parser: AddParser) -> None:
    new = add_parser(
        "keygen",
        aliases=["new-key"],
        help="make an Ed25519 signing key; print its key id and raw public key",
    )
    new.add_argument(
        "--out", type=Path, help="write the private key (PEM) here, mode 0600 (else stdout)"
    )
    new.set_defaults(run=lambda a: _new_key(a.out))


def add_certify_key(add_parser: AddParser) -> None:
    certify = add_parser(
        "certify-key", help="certify a new signing key with the root key (a key rotation)"
    )
    certify.add_argument("public_key", help="the new key's public key (base64, GET /v1/keys)")
    certify.add_argument(
        "--root-key-file", type=Path, required=True, help="the root's private key (PEM or seed)"
    )
    certify.set_defaults(run=lambda a: _certify_key(a.public_key, a.root_key_file))


def _retire_key(key_id: str) -> int:
    """Retire a key in the audit store named by REDIS_URL, and in every table's log, with
    the server's signing key (the new one: FAIRROLL_SIGNING_KEY and its certificate)."""
    import asyncio  # noqa: PLC0415

    store = operator_store()
    if isinstance(store, int):
        return store

    async def retire() -> int:
        try:
            key = await store.retire_key(key_id)
            if key is None:
                print(f"error: no published key {key_id}", file=sys.stderr)
                return 1
            tables = 0
            async for table in store.tables():
                tables += await store.retire_in(table, key_id) is not None
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            await store.redis.aclose()
        print(f"{key.key_id} retired at {key.not_after}; a key.retire entry in {tables} table(s)")
        return 0

    return asyncio.run(retire())


def _new_key(out: Path | None) -> int:
    """A new key: its PEM to ``out`` (never over a file) or stdout, what to pin to stderr."""
    from fairroll.audit.checkpoint import note_key  # noqa: PLC0415
    from fairroll.audit.signing import Signer  # noqa: PLC0415

    signer = Signer.generate()
    pem = signer.private_pem()
    if out is None:
        sys.stdout.write(pem.decode())
    else:
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            print(f"error: {out} exists; a key is never written over", file=sys.stderr)
            return 2
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
    log_name = os.environ.get("FAIRROLL_LOG_NAME", "fairroll").strip() or "fairroll"
    public = signer.public_key.public_key
    print(f"key_id: {signer.key_id}", file=sys.stderr)
    print(f"public_key: {public}", file=sys.stderr)
    print(f"note_key: {note_key(log_name, public)}", file=sys.stderr)
    return 0


def _certify_key(public_key: str, root_key_file: Path) -> int:
    """Print the root's certificate of a new signing key: FAIRROLL_KEY_CERTIFICATE."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit.signing import certify, load_signer  # noqa: PLC0415

    root = load_signer(key=None, key_file=root_key_file, dev_dir=None)
    try:
        certificate = certify(root, public_key)
    except ValueError as refused:
        print(f"fairroll certify-key: {refused}", file=sys.stderr)
        return 2
    print(msgspec.json.encode(certificate).decode())
    return 0
