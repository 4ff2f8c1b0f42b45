"""The Lua scripts the store runs in Redis, each in a ``.lua`` file of its own.

They are read once, when this module is imported (so at startup), from the package's
``lua`` folder: editors, linters and diffs see them as Lua. A script that walks a Merkle
tree starts with ``frontier.lua``'s helpers. Whole-line ``--`` comments are dropped
from the text sent to Redis (a script sent by EVAL each time pays for every byte), so
the files can say what each script's KEYS, ARGV and replies are.

>>> APPEND.text.startswith("local function stored_index")
True
>>> len(APPEND.sha)
40
"""

from __future__ import annotations

import hashlib
from importlib.resources import files
from typing import NamedTuple

__all__ = [
    "APPEND",
    "ARCHIVE",
    "COSIGN",
    "HASHES",
    "SET_TREE",
    "SIGNED",
    "TIP",
    "TOUCH",
    "TRIM_TREE",
    "Script",
    "load",
]


class Script(NamedTuple):
    """A script's text as sent to Redis, and its SHA-1 (the name EVALSHA calls it by)."""

    name: str
    text: str
    sha: str


def load(package: str, name: str, *, prelude: tuple[str, ...] = ()) -> Script:
    """The script ``<name>.lua`` of ``package``'s ``lua`` folder, after its preludes."""
    text = "".join(_source(package, part) for part in (*prelude, name))
    digest = hashlib.sha1(text.encode()).hexdigest()  # noqa: S324 (Redis's own name)
    return Script(name, text, digest)


def _source(package: str, name: str) -> str:
    raw = files(package).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")
    return "".join(
        line for line in raw.splitlines(keepends=True) if not line.lstrip().startswith("--")
    )


_HERE = "fairroll.audit.redis"
_TREE = ("frontier",)
TIP = load(_HERE, "tip", prelude=_TREE)
APPEND = load(_HERE, "append", prelude=_TREE)
SET_TREE = load(_HERE, "set_tree")
TRIM_TREE = load(_HERE, "trim_tree")
SIGNED = load(_HERE, "signed")
ARCHIVE = load(_HERE, "archive")
HASHES = load(_HERE, "hashes")
COSIGN = load(_HERE, "cosign")
TOUCH = load(_HERE, "touch")
