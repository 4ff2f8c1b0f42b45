"""Hash chains of seed sessions: the server's seeds, committed all at once, revealed one
roll at a time (``docs/randomness.md``, "Hash-chain seed sessions").

The server draws the chain's *last* link; every earlier link is the hash of the next::

    link[length] = 32 bytes from the operating system
    link[j - 1]  = SHA-256(b"fairroll/chain/v1" || link[j])       for j = length .. 1
    anchor       = link[0]            (committed in the log before any roll uses it)

Links are written as 64 lowercase hex digits. The roll at step ``j`` of the chain (its
``j``-th roll) reveals ``link[j]``; anyone checks it by hashing it once to the link the
roll before revealed (or ``j`` times to the anchor), and since SHA-256 cannot be run
backwards, the anchor fixed every link before the first roll was asked for.

>>> last = "00" * 32
>>> chain = HashChain(last, 3)
>>> previous(chain.link(1)) == chain.anchor
True
>>> steps_to(chain.link(3), 3) == chain.anchor
True
>>> chain.link(3) == last
True

A chain keeps one link in every ``SPACING`` (its *marks*, computed once from the last
link), so a link is found with fewer than ``SPACING`` hashes, however long the chain.
"""

from __future__ import annotations

import hashlib

__all__ = ["CHAIN_DOMAIN", "MAX_LENGTH", "SPACING", "HashChain", "is_link", "previous", "steps_to"]

#: Domain separation of every chain hash: bump the version to change the scheme.
CHAIN_DOMAIN = b"fairroll/chain/v1"
#: The longest chain a session commits (its marks are computed once per process).
MAX_LENGTH = 10_000
#: One link kept in every SPACING (a mark): finding a link takes fewer hashes than this.
SPACING = 16
_HEX = frozenset("0123456789abcdef")


def is_link(value: object) -> bool:
    """A link as the log writes it: 64 lowercase hex digits.

    >>> is_link("ab" * 32), is_link("AB" * 32), is_link(None)
    (True, False, False)
    """
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def previous(link: str) -> str:
    """The link before ``link`` (hex): SHA-256 of the domain and the link's 32 bytes."""
    return hashlib.sha256(CHAIN_DOMAIN + bytes.fromhex(link)).hexdigest()


def steps_to(link: str, steps: int) -> str:
    """``link`` hashed ``steps`` times: a step-``j`` link hashed ``j`` times is the anchor."""
    raw = bytes.fromhex(link)
    for _ in range(steps):
        raw = hashlib.sha256(CHAIN_DOMAIN + raw).digest()
    return raw.hex()


class HashChain:
    """The links of one chain from its last link: ``link(j)`` for j in 0..length."""

    __slots__ = ("_marks", "anchor", "length")

    def __init__(self, last: str, length: int) -> None:
        if not 1 <= length <= MAX_LENGTH:
            raise ValueError(f"a chain has 1 to {MAX_LENGTH} links, not {length}")
        self.length = length
        # marks[k] is link[length - k * SPACING], walking down from the last link.
        raw = bytes.fromhex(last)
        if len(raw) != 32:
            raise ValueError("a chain's last link is 32 bytes (64 hex digits)")
        marks = [raw]
        for step in range(1, length + 1):
            raw = hashlib.sha256(CHAIN_DOMAIN + raw).digest()
            if step % SPACING == 0:
                marks.append(raw)
        self._marks = marks
        self.anchor = raw.hex()

    def link(self, j: int) -> str:
        """Link ``j`` (0 is the anchor, ``length`` the last link), as hex."""
        if not 0 <= j <= self.length:
            raise ValueError(f"a chain of {self.length} links has no link {j}")
        # The nearest mark at or above j, then down to j.
        k = (self.length - j) // SPACING
        raw = self._marks[k]
        for _ in range(self.length - k * SPACING - j):
            raw = hashlib.sha256(CHAIN_DOMAIN + raw).digest()
        return raw.hex()
