"""A table's log checked here, trusting nothing the server says about it.

The checks are those of fairroll's standard-library verifier (``scripts/verify_roll.py``
in the service's repository, shipped in this package as ``_stdlib_verifier``): strict
JSON, the hash chain (RFC 8785), seqs, sources and the table's policy, seed sessions'
nonces and reveals, every seeded die re-derived, the RFC 6962 Merkle root. This module
adds what the standard library cannot: each entry's Ed25519 signature, with the key its
``key_id`` names in the published keys (``GET /v1/keys``). Pin ``root`` (the key id you
were given out of band) to trust only the keys that root certified.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairroll_client import _stdlib_verifier as stdlib
from fairroll_client.witness import trusted_keys

__all__ = ["SIGNATURE_CONTEXT", "Verified", "verify_export"]

#: What an entry's signature signs: this, then its entry_hash (docs/audit.md).
SIGNATURE_CONTEXT = b"fairroll/entry/v1:"


@dataclass(frozen=True, slots=True)
class Verified:
    """The verdict on a log, in the shape the npm package's ``verifyExport`` gives too:
    ``ok``; how many ``entries``; the ``first_bad_seq`` and the ``problems`` found
    (``"seq N: why"``); the ``sources`` of the dice, counted; how many
    ``signatures_checked``. Here also the log's ``merkle_root`` and ``head``."""

    ok: bool
    entries: int = 0
    first_bad_seq: int | None = None
    problems: tuple[str, ...] = ()
    sources: dict[str, int] = field(default_factory=dict)
    signatures_checked: int = 0
    merkle_root: str | None = None
    head: str | None = None

    @property
    def reason(self) -> str | None:
        """The first problem (the name 0.1.0 gave the verdict's why)."""
        return self.problems[0] if self.problems else None


def verify_export(
    ndjson: bytes | str, keys: dict[str, Any], *, root: str | None = None
) -> Verified:
    """Check an NDJSON export (``GET /v1/tables/{table}/export``) against ``keys``
    (``GET /v1/keys``). With ``root``, the root key id obtained out of band, only the keys
    whose certificate that root signed are trusted; without it, every key ``keys`` lists
    (so the server's word on its own keys)."""
    text = ndjson.decode("utf-8") if isinstance(ndjson, bytes) else ndjson
    lines = [line for line in text.splitlines() if line.strip()]
    if root is not None:
        published = trusted_keys(keys, root)
        if not published:
            return _bad(None, f"no signing key is certified by the root {root}", len(lines))
    else:
        published = {
            key["key_id"]: base64.b64decode(key["public_key"]) for key in keys.get("keys", [])
        }
    try:
        summary = stdlib.verify_lines(lines)
    except stdlib.LogError as bad:
        return _bad(bad.seq, str(bad), len(lines))
    for line in lines:
        entry = stdlib.strict_json(line)
        raw = published.get(entry["key_id"])
        if raw is None:
            return _bad(entry["seq"], f"signed by unknown key {entry['key_id']}", len(lines))
        try:
            Ed25519PublicKey.from_public_bytes(raw).verify(
                base64.b64decode(entry["signature"]),
                SIGNATURE_CONTEXT + entry["entry_hash"].encode(),
            )
        except InvalidSignature:
            return _bad(entry["seq"], "the signature does not verify", len(lines))
    return Verified(
        ok=True,
        entries=summary["entries"],
        merkle_root=summary["merkle_root"],
        head=summary["head"],
        sources=summary["sources"],
        signatures_checked=len(lines),
    )


def _bad(seq: int | None, why: str, entries: int) -> Verified:
    return Verified(
        ok=False,
        entries=entries,
        first_bad_seq=seq,
        problems=(f"seq {seq}: {why}" if seq is not None else why,),
    )
