"""The table page's files: hand-written ES modules, a stylesheet and the vendored Redoc,
served under ``/static`` as they are (no build step). ``STATIC`` is their folder."""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC"]

STATIC = Path(__file__).with_name("static")
