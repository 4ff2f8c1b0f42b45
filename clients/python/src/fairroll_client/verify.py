"""A table's log checked here, trusting nothing the server says about it.

The checks are fairroll's own: this package vendors the service's one Python
verification core (``fairroll_client._core``, the code ``fairroll verify`` and ``POST
/v1/verify`` run; ``docs/audit.md`` in the service's repository lists every check):
strict JSON, the hash chain (RFC 8785), seqs, sources and the table's policy, keys
published in the log under the pinned root, each entry's Ed25519 signature, seed
sessions' nonces, links and reveals, every seeded die re-derived, every outcome
re-resolved from its request and dice by the rules the server runs (its mechanics,
vendored too; a roll of a mechanic this package does not know, a server's plug-in, is
checked up to its dice), the RFC 6962 Merkle root. A log is verified only under a
pinned ``root`` (the key id you were given out of band): without one the verdict is NOT
VERIFIED, whatever the log holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fairroll_client._core.audit.entry import jcs
from fairroll_client._core.audit.receipts import trusted_keys
from fairroll_client._core.audit.verify import Trust, verify_entries
from fairroll_client._core.audit.verify.entries import check_dice
from fairroll_client._core.mechanics import MECHANICS, replay_entry
from fairroll_client.checkpoints import Kept

__all__ = ["NOT_VERIFIED", "Verified", "verify_export"]

#: The verdict's problem when no root is pinned: nothing the server signed can be trusted.
NOT_VERIFIED = "NOT VERIFIED: no root key is pinned (pass root=, the key id the operator gave you)"


@dataclass(frozen=True, slots=True)
class Verified:
    """The verdict on a log, in the shape the npm package's ``verifyExport`` gives too:
    ``ok``; how many ``entries``; the ``first_bad_seq`` and the ``problems`` found
    (``"seq N: why"``); the ``sources`` of the dice, counted; how many
    ``signatures_checked``; the rolls that verify but are ``not_fair`` (``{seq, why}``:
    a client seed the server knew before it drew the chain). Here also the log's
    ``merkle_root`` (base64) and ``head`` (the last entry_hash)."""

    ok: bool
    entries: int = 0
    first_bad_seq: int | None = None
    problems: tuple[str, ...] = ()
    sources: dict[str, int] = field(default_factory=dict)
    signatures_checked: int = 0
    not_fair: tuple[dict[str, Any], ...] = ()
    merkle_root: str | None = None
    head: str | None = None

    @property
    def reason(self) -> str | None:
        """The first problem (the name 0.1.0 gave the verdict's why)."""
        return self.problems[0] if self.problems else None


def verify_export(
    ndjson: bytes | str,
    keys: dict[str, Any],
    *,
    root: str | None = None,
    kept: Sequence[Kept] = (),
) -> Verified:
    """Check an NDJSON export (``GET /v1/tables/{table}/export``) under the pinned
    ``root``: the log's own signing keys count only as the log publishes them under that
    root; ``keys`` (``GET /v1/keys``) serves a log read from the middle, and only its keys
    that root certified. ``kept``: checkpoints verified before (``KeptCheckpoints``): the
    log must still hold each tree, or it was rewritten, forked or truncated. Without
    ``root``: NOT VERIFIED (``ok`` False)."""
    text = ndjson.decode("utf-8") if isinstance(ndjson, bytes) else ndjson
    # NDJSON lines end in "\n" only: str.splitlines would also split a line at U+2028,
    # which JSON strings (a player's name) may hold unescaped.
    lines = [line for line in text.split("\n") if line.strip()]
    if root is None:
        return Verified(ok=False, entries=len(lines), problems=(NOT_VERIFIED,))
    roots = [(k.size, k.root) for k in kept]
    trust = Trust(keys=trusted_keys(keys, root), root=root, roots=roots)
    report = verify_entries(lines, trust, replay=_replay)
    if not report.ok:
        seq = report.first_bad_seq
        why = report.reason or "the log does not verify"
        return Verified(
            ok=False,
            entries=len(lines),
            first_bad_seq=seq,
            problems=(f"seq {seq}: {why}" if seq is not None else why,),
            sources=dict(report.sources),
        )
    return Verified(
        ok=True,
        entries=report.entries,
        sources=dict(report.sources),
        signatures_checked=report.entries if report.signatures_checked else 0,
        not_fair=tuple({"seq": n.seq, "why": n.why} for n in report.not_fair),
        merkle_root=report.root_hash,
        head=report.head_hash,
    )


def _replay(entry: dict[str, Any], seed: str | None) -> tuple[Any, Any]:
    """The roll re-resolved by the rules, as ``fairroll verify`` replays it; a mechanic
    this package does not know is taken as recorded once its dice derive from ``seed``."""
    if entry.get("mechanic") in MECHANICS:
        return replay_entry(entry, seed)
    check_dice(entry, seed, None, jcs)
    return entry["dice"], entry.get("outcome")
