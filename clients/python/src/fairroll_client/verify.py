"""A table's log checked here, trusting nothing the server says about it.

The checks are those of fairroll's standard-library verifier (``scripts/verify_roll.py``
in the service's repository, shipped in this package as ``_stdlib_verifier``): strict
JSON, the hash chain (RFC 8785), seqs, sources and the table's policy, seed sessions'
nonces and reveals, every seeded die re-derived, the RFC 6962 Merkle root. This module
adds what the standard library cannot: each entry's Ed25519 signature, with the key its
``key_id`` names in the published keys (``GET /v1/keys``). Pin ``root`` (the key id you
were given out of band) to refuse a keys document rooted elsewhere.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairroll_client import _stdlib_verifier as stdlib

__all__ = ["SIGNATURE_CONTEXT", "Verified", "verify_export"]

#: What an entry's signature signs: this, then its entry_hash (docs/audit.md).
SIGNATURE_CONTEXT = b"fairroll/entry/v1:"


@dataclass(frozen=True, slots=True)
class Verified:
    """The verdict on a log: ``ok``, or the first bad seq and why."""

    ok: bool
    entries: int = 0
    first_bad_seq: int | None = None
    reason: str | None = None
    merkle_root: str | None = None
    head: str | None = None
    sources: dict[str, int] = field(default_factory=dict)
    signatures_checked: int = 0


def verify_export(
    ndjson: bytes | str, keys: dict[str, Any], *, root: str | None = None
) -> Verified:
    """Check an NDJSON export (``GET /v1/tables/{table}/export``) against ``keys``."""
    text = ndjson.decode("utf-8") if isinstance(ndjson, bytes) else ndjson
    lines = [line for line in text.splitlines() if line.strip()]
    if root is not None and keys.get("root") != root:
        return Verified(ok=False, reason=f"the keys are rooted at {keys.get('root')}, not {root}")
    try:
        summary = stdlib.verify_lines(lines)
    except stdlib.LogError as bad:
        return Verified(ok=False, first_bad_seq=bad.seq, reason=str(bad))
    published = {
        key["key_id"]: Ed25519PublicKey.from_public_bytes(base64.b64decode(key["public_key"]))
        for key in keys.get("keys", [])
    }
    for line in lines:
        entry = stdlib.strict_json(line)
        key = published.get(entry["key_id"])
        if key is None:
            return Verified(
                ok=False, first_bad_seq=entry["seq"], reason=f"unknown key {entry['key_id']}"
            )
        try:
            key.verify(
                base64.b64decode(entry["signature"]),
                SIGNATURE_CONTEXT + entry["entry_hash"].encode(),
            )
        except InvalidSignature:
            return Verified(
                ok=False, first_bad_seq=entry["seq"], reason="the signature does not verify"
            )
    return Verified(
        ok=True,
        entries=summary["entries"],
        merkle_root=summary["merkle_root"],
        head=summary["head"],
        sources=summary["sources"],
        signatures_checked=len(lines),
    )
