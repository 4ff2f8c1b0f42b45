"""The Merkle tree against RFC 6962's own recursive definitions (proofs written straight
from RFC 9162 section 2.1), on every size up to 70 and on hypothesis-drawn ones."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.audit import merkle
from fairroll.audit.merkle import Frontier, ProofError


def _leaves(n: int) -> list[bytes]:
    return [merkle.leaf(f"entry {i}".encode()) for i in range(n)]


def _store(leaves: list[bytes]) -> tuple[list[bytes], list[Frontier]]:
    """Every stored hash of the tree, appended as the store appends them."""
    stored: list[bytes] = []
    frontiers = [Frontier.empty()]
    for item in leaves:
        frontier, new = frontiers[-1].append(item)
        assert len(stored) == merkle.stored_index(0, frontier.size - 1)
        stored += new
        assert len(stored) == merkle.stored_count(frontier.size)
        frontiers.append(frontier)
    return stored, frontiers


def _reader(stored: list[bytes]) -> merkle.Reader:
    return lambda indices: [stored[i] for i in indices]


def _rfc_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 9162 2.1.3.1 PATH(m, D[n]), literally."""
    n = len(leaves)
    if n == 1:
        return []
    k = 1 << ((n - 1).bit_length() - 1)
    if m < k:
        return [*_rfc_path(m, leaves[:k]), merkle.tree_hash_of(leaves[k:])]
    return [*_rfc_path(m - k, leaves[k:]), merkle.tree_hash_of(leaves[:k])]


def _rfc_subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    """RFC 9162 2.1.4.1 SUBPROOF(m, D[n], b), literally."""
    n = len(leaves)
    if m == n:
        return [] if whole else [merkle.tree_hash_of(leaves)]
    k = 1 << ((n - 1).bit_length() - 1)
    if m <= k:
        return [*_rfc_subproof(m, leaves[:k], whole), merkle.tree_hash_of(leaves[k:])]
    return [*_rfc_subproof(m - k, leaves[k:], False), merkle.tree_hash_of(leaves[:k])]


def test_empty_tree_root_is_sha256_of_nothing() -> None:
    assert hashlib.sha256(b"").digest() == merkle.EMPTY_ROOT
    assert Frontier.empty().root() == merkle.EMPTY_ROOT


def test_rfc6962_two_leaf_root_by_hand() -> None:
    a, b = merkle.leaf(b"a"), merkle.leaf(b"b")
    assert a == hashlib.sha256(b"\x00a").digest()
    assert merkle.tree_hash_of([a, b]) == hashlib.sha256(b"\x01" + a + b).digest()


def test_every_size_to_70_roots_and_proofs_match_the_rfc() -> None:
    leaves = _leaves(70)
    stored, frontiers = _store(leaves)
    read = _reader(stored)
    for size in range(1, 71):
        root = merkle.tree_hash_of(leaves[:size])
        assert frontiers[size].root() == root
        assert merkle.subtree_hash(0, size, read) == root
        got = [read([i])[0] for _, i in merkle.frontier_indices(size)]
        assert Frontier.of(size, got).root() == root
        for index in range(size):
            proof = merkle.inclusion_proof(index, size, read)
            assert proof == _rfc_path(index, leaves[:size])
            merkle.verify_inclusion(index, size, leaves[index], proof, root)
        for old in range(1, size + 1):
            proof = merkle.consistency_proof(old, size, read)
            assert proof == (_rfc_subproof(old, leaves[:size], True) if old < size else [])
            old_root = merkle.tree_hash_of(leaves[:old])
            merkle.verify_consistency(old, size, old_root, root, proof)


def test_the_next_leafs_proof_is_the_frontier_before_it() -> None:
    # A round's last roll is proven from the frontier it was chained on (the group
    # commit's receipts): the same path as the RFC's for the tree's last leaf.
    leaves = _leaves(300)
    stored, frontiers = _store(leaves)
    for size in range(1, 301):
        proof = frontiers[size - 1].next_leaf_proof()
        assert proof == merkle.inclusion_proof(size - 1, size, _reader(stored))
        merkle.verify_inclusion(
            size - 1, size, leaves[size - 1], proof, merkle.tree_hash_of(leaves[:size])
        )


@given(st.integers(2, 300), st.data())
def test_a_wrong_leaf_root_or_proof_is_refused(size: int, data: st.DataObject) -> None:
    leaves = _leaves(size)
    stored, _ = _store(leaves)
    read = _reader(stored)
    root = merkle.tree_hash_of(leaves)
    index = data.draw(st.integers(0, size - 1))
    proof = merkle.inclusion_proof(index, size, read)
    with pytest.raises(ProofError):
        merkle.verify_inclusion(index, size, merkle.leaf(b"forged"), proof, root)
    with pytest.raises(ProofError):
        merkle.verify_inclusion((index + 1) % size, size, leaves[index], proof, root)
    if proof:
        with pytest.raises(ProofError):
            merkle.verify_inclusion(index, size, leaves[index], proof[:-1], root)
    old = data.draw(st.integers(1, size - 1))
    consistency = merkle.consistency_proof(old, size, read)
    old_root = merkle.tree_hash_of(leaves[:old])
    merkle.verify_consistency(old, size, old_root, root, consistency)
    forked = merkle.tree_hash_of([*leaves[: old - 1], merkle.leaf(b"fork")])
    with pytest.raises(ProofError):
        merkle.verify_consistency(old, size, forked, root, consistency)
    with pytest.raises(ProofError):
        merkle.verify_consistency(size, old, root, old_root, consistency)
