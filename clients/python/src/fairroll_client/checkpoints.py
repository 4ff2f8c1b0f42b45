"""The last checkpoint a client verified, per log: every later note must extend it.

A receipt proves its entry in *a* tree signed under the pinned root; alone it cannot say
that tree is the one the other players see. An operator holding the signing key can show
one player a tree of its own: the player's roll edited, re-hashed and re-signed, in a note
of the same size as the public one. So the client keeps the last note it verified for
each table's log (by the note's origin, ``<log name>/<table>``; give each server its
own store, or its own ``FAIRROLL_LOG_NAME``: two servers' logs of one origin would be
taken for one) and holds every new receipt's note to it: a note of the same size must state
the same root; a note of another size must be proven consistent with it by the server
(RFC 9162 consistency proof, ``GET /v1/tables/{table}/proofs/consistency``). A history
shown to this player alone, and not the one the log goes on with, is caught at the
player's next roll; two notes of one size with two roots prove it to anyone (``fairroll
verify --equivocation A B``).

Kept in memory per client object; given a file path (``Fairroll(..., checkpoints=path)``)
it outlives the process, so a fork is caught across runs too. The file is JSON, rewritten
whole (through a temporary file) each time a larger tree is kept.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Kept", "KeptCheckpoints"]


@dataclass(frozen=True, slots=True)
class Kept:
    """A checkpoint verified under the pinned root: its tree ``size``, ``root`` hash and
    the signed ``note`` itself (evidence, should the log ever show another tree)."""

    size: int
    root: bytes
    note: str


class KeptCheckpoints:
    """The last checkpoint verified per log (by origin), in memory and, with ``path``, in
    a file (read when made, written when a log's kept tree grows)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._kept: dict[str, Kept] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self._kept = _read(self.path)

    def get(self, origin: str) -> Kept | None:
        """The largest tree of the log ``origin`` verified so far (None before the
        first)."""
        return self._kept.get(origin)

    def of_table(self, table: str) -> list[Kept]:
        """The trees kept of ``table``'s log (under any log name)."""
        return [k for origin, k in self._kept.items() if origin.rsplit("/", 1)[-1] == table]

    def keep(self, origin: str, seen: Kept, over: Kept | None) -> bool:
        """Keep ``seen`` (checked against ``over``, the tree kept when the check began)
        if it is larger; False when another check kept a tree meanwhile: check again
        against that one."""
        with self._lock:
            now = self._kept.get(origin)
            if now != over:
                return False
            if now is None or seen.size > now.size:
                self._kept[origin] = seen
                if self.path is not None:
                    _write(self.path, self._kept)
            return True


def _read(path: Path) -> dict[str, Kept]:
    said: Any = json.loads(path.read_text(encoding="utf-8"))
    logs = said.get("logs", {}) if isinstance(said, dict) else {}
    return {
        str(origin): Kept(
            size=int(kept["size"]),
            root=base64.b64decode(kept["root_hash"], validate=True),
            note=str(kept["note"]),
        )
        for origin, kept in logs.items()
    }


def _write(path: Path, kept: dict[str, Kept]) -> None:
    logs = {
        origin: {
            "size": k.size,
            "root_hash": base64.b64encode(k.root).decode(),
            "note": k.note,
        }
        for origin, k in sorted(kept.items())
    }
    # Written beside and moved over: a crash mid-write never leaves half a file.
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps({"logs": logs}, indent=1) + "\n", encoding="utf-8")
    partial.replace(path)
