"""The npm client's witness names and counts only the cosigners its player trusts.

``TableWitness`` (tests/js/npm_witness.mjs) against a real server whose cosigner listing
an operator relabels, and with cosigned notes handed over between players as the VTT
integrations hand them (over a channel the operator does not run): a confirmer is named
by the trusted key, not the listing; a cosignature handed over counts only under a
trusted key and only of a tree this witness verified; a witness cosigns only a tree it
verified.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fairroll.audit import load_signer
from support import TEST_SIGNING_KEY, LiveServer, built_typescript_client, run_node

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "typescript"
PINNED = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id


@pytest.fixture(scope="module")
def seen(live_server: LiveServer) -> Iterator[Any]:
    with built_typescript_client() as index:
        yield run_node(
            ROOT / "tests" / "js" / "npm_witness.mjs",
            index,
            live_server.url,
            PINNED,
            "t-npm-witness",
            timeout=120,
        )


def test_a_confirmer_is_named_by_its_trusted_key_not_by_the_listing(seen: Any) -> None:
    assert seen["relabelled"] == ["sheena.example"], seen


def test_a_cosignature_handed_over_counts_only_under_a_trusted_key(seen: Any) -> None:
    assert seen["handedBySheena"] == ["sheena.example"], seen
    assert seen["handedByMallory"] == [], seen


def test_a_cosignature_of_a_tree_this_witness_did_not_verify_confirms_nothing(
    seen: Any,
) -> None:
    assert seen["treeNotVerified"] == [], seen
    assert "has not verified that tree" in seen["cosignNotVerified"], seen
