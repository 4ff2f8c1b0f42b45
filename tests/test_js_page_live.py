"""The table page checks its own answers live, in Debian's chromium, against a real
server behind a hostile operator (tests/browser/hostile.mjs rewrites the server's answer
to the page's roll by request interception). A grinded or tampered answer is shown red,
never "✓"; a nonce lie (rolled at N, 409 naming N+1) still gives the player the roll
made at N; and a page with no pinned root draws no ✓.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from fairroll.audit import load_signer
from support import TEST_SIGNING_KEY, LiveServer, browser_ready, run_node

PINNED = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id


@pytest.fixture(scope="module")
def hostile() -> Path:
    return browser_ready() / "hostile.mjs"


def rolled(hostile: Path, live_server: LiveServer, attack: str, root: str | None = PINNED) -> Any:
    table = "t-" + uuid.uuid4().hex[:12]
    url = f"{live_server.url}/tables/{table}" + (f"?root={root}" if root else "")
    seen = run_node(hostile, url, attack, timeout=120)
    assert seen["errors"] == [], seen
    assert seen["first"]["className"] == ("ok" if root else "unverified"), seen
    return seen


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("client-seed", "not rolled with the client seed this client sent"),
        ("proof", "inclusion proof"),
        ("note-size", "signature does not verify"),
    ],
)
def test_a_rewritten_answer_is_shown_red_never_fair(
    hostile: Path, live_server: LiveServer, attack: str, said: str
) -> None:
    second = rolled(hostile, live_server, attack)["second"]
    assert second["className"] == "bad", second
    assert second["text"].startswith("✗ Not a fair roll") and said in second["text"], second
    assert "✓" not in second["text"]


def test_a_nonce_lie_gives_the_page_the_roll_made_at_the_nonce_it_sent(
    hostile: Path, live_server: LiveServer
) -> None:
    seen = rolled(hostile, live_server, "nonce-lie")
    assert seen["second"]["className"] == "ok", seen
    assert "in your seed session (nonce 2)" in seen["second"]["text"], seen


def test_a_page_with_no_pinned_root_says_not_verified(
    hostile: Path, live_server: LiveServer
) -> None:
    first = rolled(hostile, live_server, "none", root=None)["first"]
    assert "NOT VERIFIED" in first["text"] and "✓" not in first["text"], first
