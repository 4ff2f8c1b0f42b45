"""The table page counts a pinned friend's cosignature only of the tree it verified.

table.js ``compareViews`` run as written (tests/js/page_views.mjs), with the listings an
operator could serve. A cosignature confirms a view only when its key was pinned by the
player and what it signed (the note's body, not the listing's fields or the checkpoint's
JSON ``origin``, which the server writes) is this very tree, or a larger tree of this log
that a consistency proof shows this one is a prefix of. The name shown is the one the
key carries.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from fairroll.audit.merkle import Frontier, consistency_proof, leaf
from support import run_node

ROOT = Path(__file__).resolve().parents[1]
SMALL, LARGE = 42, 50


def _trees(folder: Path) -> Path:
    """Two real trees of one log, the small a prefix of the large, and the proof."""
    stored: list[bytes] = []
    frontier = Frontier.empty()
    roots: dict[int, bytes] = {}
    for n in range(1, LARGE + 1):
        frontier, new = frontier.append(leaf(f"entry {n}".encode()))
        stored.extend(new)
        roots[n] = frontier.root()
    proof = consistency_proof(SMALL, LARGE, lambda indices: [stored[i] for i in indices])
    b64 = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
    said = {
        "small": {"size": SMALL, "root": b64(roots[SMALL])},
        "large": {"size": LARGE, "root": b64(roots[LARGE])},
        "proof": [b64(p) for p in proof],
    }
    path = folder / "trees.json"
    path.write_text(json.dumps(said))
    return path


@pytest.fixture(scope="module")
def said(tmp_path_factory: pytest.TempPathFactory) -> Any:
    trees = _trees(tmp_path_factory.mktemp("views"))
    return run_node(
        ROOT / "tests" / "js" / "page_views.mjs", ROOT / "service/fairroll/page/static", trees
    )


def test_a_pinned_friends_cosignature_of_this_very_tree_confirms_it(said: Any) -> None:
    assert "cosigned by you and 1 other player(s): bob.example" in said["same-tree"], said


def test_a_confirmer_is_named_by_its_key_not_by_the_listing(said: Any) -> None:
    assert "bob.example" in said["name-relabelled"], said
    assert "carol" not in said["name-relabelled"], said


@pytest.mark.parametrize(
    "case", ["another-tables-tree", "older-tree-relisted", "larger-other-tree"]
)
def test_a_pinned_friends_cosignature_of_another_tree_confirms_nothing(
    said: Any, case: str
) -> None:
    """Another table's tree of this size and root (the checkpoint's JSON ``origin`` set
    to it), an older tree relisted with this one's size and root, a larger tree this
    one is not a prefix of: none is this view."""
    assert "bob.example" not in said[case], said
    assert "your view is unconfirmed" in said[case], said


def test_a_pinned_friends_larger_tree_proven_to_extend_this_one_confirms_it(said: Any) -> None:
    assert "cosigned by you and 1 other player(s): bob.example" in said["larger-consistent-tree"]


def test_a_key_nobody_pinned_is_listed_never_counted(said: Any) -> None:
    assert "1 unknown cosigner(s), not counted: sybil.example" in said["stranger"], said
    assert "your view is unconfirmed" in said["stranger"], said


def test_a_refused_cosignature_is_not_called_yours(said: Any) -> None:
    assert "cosigned by you" not in said["post-refused"], said
    assert "your cosignature was not kept (HTTP 401)" in said["post-refused"], said
