"""RFC 6962 / RFC 9162 Merkle trees over a table's entries: roots, proofs, and how the
tree's hashes are laid out in Redis.

A table of ``n`` entries is the Merkle tree of ``n`` leaves; leaf ``i`` (0-based) is
entry ``seq = i + 1``::

    leaf hash  = SHA-256(0x00 || JCS bytes of the entry)         (entry.leaf_hash)
    node hash  = SHA-256(0x01 || left || right)
    MTH(D[n])  = the RFC 6962 tree hash: for n > 1, k = the largest power of two < n,
                 MTH(D[n]) = node(MTH(D[0:k]), MTH(D[k:n]))

A seq an ``audit.epoch`` entry declares lost has the leaf ``SHA-256(0x00 ||
"fairroll/lost/v1:" || decimal seq)``: the tree keeps one leaf per seq, and a
checkpoint kept from before the loss is (rightly) not consistent with the tree after.

Storage follows Go's ``golang.org/x/mod/sumdb/tlog``: every hash of a complete subtree
is kept once, at :func:`stored_index`; the hashes added by leaf ``i`` are the leaf's and
those of the subtrees it completes, contiguous, so a table's tree in Redis is one string
of 32-byte slots that each append extends (``APPEND``). The ``Frontier`` (the hashes of
the complete subtrees a tree of ``n`` leaves splits into, largest first) is all an
appender needs to extend it and to compute the new root.

>>> leaves = [leaf(bytes([i])) for i in range(7)]
>>> frontier = Frontier.empty()
>>> for item in leaves:
...     frontier, _ = frontier.append(item)
>>> frontier.root() == tree_hash_of(leaves)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "Frontier",
    "ProofError",
    "consistency_proof",
    "frontier_indices",
    "inclusion_proof",
    "leaf",
    "lost_leaf",
    "node",
    "root_from_frontier",
    "stored_count",
    "stored_index",
    "subtree_hash",
    "tree_hash_of",
    "verify_consistency",
    "verify_inclusion",
]

HASH_SIZE = 32
#: MTH of the empty tree: SHA-256 of nothing.
EMPTY_ROOT = hashlib.sha256(b"").digest()
LOST_PREFIX = b"fairroll/lost/v1:"

#: Reads stored hashes by index, in the order asked.
Reader = Callable[[Sequence[int]], Sequence[bytes]]


class ProofError(ValueError):
    """A proof that does not prove what it claims."""


def leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def lost_leaf(seq: int) -> bytes:
    """The leaf of a seq an epoch declared lost."""
    return leaf(LOST_PREFIX + str(seq).encode())


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def stored_index(level: int, n: int) -> int:
    """Where the hash of the ``n``-th complete subtree of height ``level`` is kept (Go's
    ``tlog.StoredHashIndex``): level-L hash n comes right after level-(L-1) hash 2n+1."""
    for _ in range(level):
        n = 2 * n + 1
    index = 0
    while n > 0:
        index += n
        n >>= 1
    return index + level


def stored_count(size: int) -> int:
    """How many hashes a tree of ``size`` leaves keeps."""
    if size == 0:
        return 0
    count = stored_index(0, size - 1) + 1
    last = size - 1
    while last & 1:
        count += 1
        last >>= 1
    return count


def frontier_indices(size: int) -> list[tuple[int, int]]:
    """(level, stored index) of the complete subtrees a tree of ``size`` leaves splits
    into, largest (leftmost) first."""
    out = []
    start = 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size & (1 << level):
            out.append((level, stored_index(level, start >> level)))
            start += 1 << level
    return out


class Frontier:
    """The right edge of a tree: its size and the hashes of its complete subtrees."""

    __slots__ = ("hashes", "levels", "size")

    def __init__(self, size: int, levels: Sequence[int], hashes: Sequence[bytes]) -> None:
        self.size = size
        self.levels = list(levels)
        self.hashes = list(hashes)

    @classmethod
    def empty(cls) -> Frontier:
        return cls(0, [], [])

    @classmethod
    def of(cls, size: int, hashes: Sequence[bytes]) -> Frontier:
        """The frontier of a tree of ``size`` leaves from its subtree hashes, largest
        first (as ``frontier_indices`` lists them)."""
        levels = [level for level, _ in frontier_indices(size)]
        if len(levels) != len(hashes):
            raise ValueError(f"a tree of {size} leaves has {len(levels)} frontier hashes")
        return cls(size, levels, hashes)

    def append(self, leaf_hash: bytes) -> tuple[Frontier, list[bytes]]:
        """The frontier with one more leaf, and the hashes the tree keeps for it (the leaf
        hash, then each subtree it completes), in storage order."""
        levels, hashes = list(self.levels), list(self.hashes)
        levels.append(0)
        hashes.append(leaf_hash)
        stored = [leaf_hash]
        while len(levels) > 1 and levels[-1] == levels[-2]:
            right, left = hashes.pop(), hashes.pop()
            level = levels.pop()
            levels[-1] = level + 1
            hashes.append(node(left, right))
            stored.append(hashes[-1])
        return Frontier(self.size + 1, levels, hashes), stored

    def root(self) -> bytes:
        return root_from_frontier(self.hashes)

    def next_leaf_proof(self) -> list[bytes]:
        """The inclusion proof of the leaf appended next, in the tree it makes: that
        leaf is the tree's last, and every sibling on its path is a complete subtree to
        its left, i.e. this frontier's hashes, smallest first (no hash computed, nothing
        read: a round whose batch is one roll proves it this way).

        >>> a, b, c = (leaf(x) for x in (b"a", b"b", b"c"))
        >>> Frontier.empty().append(a)[0].append(b)[0].next_leaf_proof() == [node(a, b)]
        True
        """
        return self.hashes[::-1]


def root_from_frontier(hashes: Sequence[bytes]) -> bytes:
    """MTH from the complete subtrees' hashes, largest first: fold from the right."""
    if not hashes:
        return EMPTY_ROOT
    root = hashes[-1]
    for left in reversed(hashes[:-1]):
        root = node(left, root)
    return root


def tree_hash_of(leaves: Sequence[bytes]) -> bytes:
    """MTH straight from RFC 6962's definition (for tests and small trees)."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node(tree_hash_of(leaves[:k]), tree_hash_of(leaves[k:]))


def subtree_hash(lo: int, hi: int, read: Reader) -> bytes:
    """MTH of leaves ``lo..hi-1`` of a tree whose stored hashes ``read`` gives."""
    indices: list[int] = []
    _subtree_indices(lo, hi, indices)
    hashes = dict(zip(indices, read(indices), strict=True))
    return _subtree(lo, hi, hashes)


def inclusion_proof(index: int, size: int, read: Reader) -> list[bytes]:
    """RFC 9162 inclusion proof (audit path) of leaf ``index`` in the tree of ``size``."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of {size}")
    spans: list[tuple[int, int]] = []
    _path(index, 0, size, spans)
    return _hashes_of(spans, read)


def consistency_proof(old: int, new: int, read: Reader) -> list[bytes]:
    """RFC 9162 consistency proof that the tree of ``old`` leaves is a prefix of ``new``."""
    if not 0 <= old <= new:
        raise ProofError(f"no consistency proof from size {old} to size {new}")
    if old in (0, new):
        return []
    spans: list[tuple[int, int]] = []
    _subproof(old, 0, new, True, spans)
    return _hashes_of(spans, read)


def verify_inclusion(
    index: int, size: int, leaf_hash: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 section 2.1.3.2; raises ``ProofError`` unless the proof holds."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of {size}")
    fn, sn = index, size - 1
    r = leaf_hash
    for p in proof:
        if sn == 0:
            raise ProofError("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = node(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is too short")
    if r != root:
        raise ProofError("the inclusion proof does not lead to the tree's root")


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 section 2.1.4.2; raises ``ProofError`` unless the proof holds."""
    if not 0 <= old <= new:
        raise ProofError(f"size {new} is smaller than size {old}")
    if old == new:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if old_root != new_root:
            raise ProofError("two different roots for the same size")
        return
    if old == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        return
    path = list(proof)
    if not path:
        raise ProofError("the consistency proof is empty")
    if old & (old - 1) == 0:  # a power of two: the old root is the first node
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr = node(c, fr)
            sr = node(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is too short")
    if fr != old_root:
        raise ProofError("the consistency proof does not lead to the old root")
    if sr != new_root:
        raise ProofError("the consistency proof does not lead to the new root")


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _is_perfect(lo: int, hi: int) -> bool:
    n = hi - lo
    return n & (n - 1) == 0 and lo % n == 0


def _subtree_indices(lo: int, hi: int, out: list[int]) -> None:
    if _is_perfect(lo, hi):
        level = (hi - lo).bit_length() - 1
        out.append(stored_index(level, lo >> level))
        return
    k = _split(hi - lo)
    _subtree_indices(lo, lo + k, out)
    _subtree_indices(lo + k, hi, out)


def _subtree(lo: int, hi: int, hashes: dict[int, bytes]) -> bytes:
    if _is_perfect(lo, hi):
        level = (hi - lo).bit_length() - 1
        return hashes[stored_index(level, lo >> level)]
    k = _split(hi - lo)
    return node(_subtree(lo, lo + k, hashes), _subtree(lo + k, hi, hashes))


def _path(m: int, lo: int, hi: int, out: list[tuple[int, int]]) -> None:
    if hi - lo == 1:
        return
    k = _split(hi - lo)
    if m - lo < k:
        _path(m, lo, lo + k, out)
        out.append((lo + k, hi))
    else:
        _path(m, lo + k, hi, out)
        out.append((lo, lo + k))


def _subproof(m: int, lo: int, hi: int, whole: bool, out: list[tuple[int, int]]) -> None:
    n = hi - lo
    if m == n:
        if not whole:
            out.append((lo, hi))
        return
    k = _split(n)
    if m <= k:
        _subproof(m, lo, lo + k, whole, out)
        out.append((lo + k, hi))
    else:
        _subproof(m - k, lo + k, hi, False, out)
        out.append((lo, lo + k))


def _hashes_of(spans: list[tuple[int, int]], read: Reader) -> list[bytes]:
    indices: list[int] = []
    for lo, hi in spans:
        _subtree_indices(lo, hi, indices)
    hashes = dict(zip(indices, read(indices), strict=True))
    return [_subtree(lo, hi, hashes) for lo, hi in spans]
