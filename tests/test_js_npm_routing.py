"""The npm client's fair route is its own: an operator cannot send a fair call elsewhere.

``api.POST`` of a roll without seed, dice or session goes through the player's seed
session and is checked. Which paths roll is what the client's spec declares (held to it
by the compiler); the server's ``GET /v1/systems`` may add a path, never take one off.
A relisting that drops a mechanic (or its dice) used to send that mechanic's fair call
to a server-drawn seed, returned unchecked (tests/js/npm_routing.mjs).
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
            ROOT / "tests" / "js" / "npm_routing.mjs",
            index,
            live_server.url,
            PINNED,
            "t-npm-routing",
            timeout=120,
        )


@pytest.mark.parametrize(
    "case",
    [
        "listed-as-served",
        "no-mechanic-listed",
        "contest-listed-without-dice",
        "formula-with-seed-undefined",
        "formula-with-seed-null",
    ],
)
def test_a_fair_call_stays_fair_whatever_the_server_lists(seen: Any, case: str) -> None:
    rolled = seen[case]
    assert rolled.get("source") == "committed", rolled
    assert rolled["committed"] and rolled["verified"], rolled
