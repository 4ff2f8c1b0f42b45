"""A table's log verified from its tiles (C2SP tlog-tiles) instead of its export: the
server's ``/v1/tables/<table>/log``, or a mirror of it on any static host (``fairroll
mirror``), or a mirror's directory.

The reading is the service's own (``fairroll_client._core.audit.verify.tiles_source``,
vendored with the verification core): the checkpoint must be signed by a key the pinned
root certifies, every hash tile must fold to its root and every entry bundle hash to its
leaves. The entries it rebuilds are then checked by ``verify_export``, the checkpoint read
kept beside ``kept``, so a log verifies the same from its tiles as from its export.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fairroll_client._core.audit.receipts import trusted_keys
from fairroll_client._core.audit.verify.tiles_source import loader, read_log
from fairroll_client.checkpoints import Kept
from fairroll_client.verify import NOT_VERIFIED, Verified, verify_export

__all__ = ["verify_tiles"]


def verify_tiles(
    location: str,
    keys: dict[str, Any],
    *,
    root: str | None = None,
    kept: Sequence[Kept] = (),
) -> Verified:
    """Check the log whose tiles are at ``location`` (an ``http(s)://`` URL of the log's
    prefix or of a mirror, or a mirror's directory) under the pinned ``root``, as
    ``verify_export`` checks an export (``keys``: ``GET /v1/keys``; ``kept``: checkpoints
    verified before, which the tiles' tree must hold). A tile, bundle or checkpoint that
    is not the log's makes ``ok`` False, naming it; a host that cannot be reached raises
    ``OSError``. Without ``root``: NOT VERIFIED."""
    if root is None:
        return Verified(ok=False, problems=(NOT_VERIFIED,))
    try:
        log = read_log(loader(location), trusted_keys(keys, root))
    except ValueError as exc:  # a tile, a bundle or the checkpoint is not the log's
        return Verified(ok=False, problems=(f"the tiles at {location}: {exc}",))
    read = Kept(size=log.size, root=log.root, note=log.note)
    return verify_export(log.ndjson(), keys, root=root, kept=[*kept, read])
