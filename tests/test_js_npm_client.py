"""The npm client against a hostile operator: every answer checked before it is returned.

A real server, behind a ``fetch`` that rewrites its answers as an operator holding the
key would (tests/js/npm_hostile.mjs). Each rewrite must end in ``UnfairRollError``; the
nonce lie (rolled at N, answered 409 naming N+1) must give the player the roll made at
N, read from the log; a session said to be revealed is never replaced silently; and
with no pinned root every verdict says NOT VERIFIED.
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
def built() -> Iterator[Path]:
    with built_typescript_client() as index:
        yield index


@pytest.fixture(scope="module")
def seen(built: Path, live_server: LiveServer) -> Any:
    return run_node(
        ROOT / "tests" / "js" / "npm_hostile.mjs",
        built,
        live_server.url,
        PINNED,
        "t-npm-hostile",
        timeout=180,
    )


def test_an_honest_roll_of_any_mechanic_is_fair_and_verified(seen: Any) -> None:
    for name in ("honest", "another-mechanic"):  # rollFormula, and api.POST of a contest
        assert seen[name]["ok"] and seen[name]["verdict"]["verified"], seen[name]
        assert seen[name]["nonce"] >= 1


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("another-client-seed", "client seed"),
        ("flipped-proof", "inclusion proof"),
        ("note-size-edited", "signature does not verify"),
        ("nonce-holds-another-roll", "holds a roll this client did not send"),
        ("refused", "refuses nonce 1"),
        ("revealed", "start a new session"),
        ("after-revealed", "start a new session"),
    ],
)
def test_a_rewritten_answer_raises_unfair_roll_error(seen: Any, attack: str, said: str) -> None:
    assert seen[attack]["ok"] is False and seen[attack]["unfair"] is True, seen[attack]
    assert said in seen[attack]["error"], seen[attack]


def test_a_nonce_lie_gives_the_roll_made_at_the_nonce_sent(seen: Any) -> None:
    """The operator rolled at N, disliked it and answered 409 naming N+1: the client
    takes the roll at N from the log, checked like any answer, and never rolls at N+1."""
    lie = seen["nonce-lie"]
    assert lie["ok"] and lie["fromLog"] and lie["verdict"]["verified"], lie
    assert lie["nonce"] == seen["another-mechanic"]["nonce"] + 1


def test_a_closed_session_is_never_replaced_silently(seen: Any) -> None:
    assert seen["seedsOpenedAfterRevealed"] == 0


def test_without_a_pinned_root_nothing_is_verified(seen: Any) -> None:
    assert seen["unpinnedRoll"]["verified"] is False
    assert seen["unpinnedRoll"]["reason"].startswith("NOT VERIFIED")
    assert seen["unpinnedExport"]["ok"] is False and seen["unpinnedExport"]["verified"] is False
    assert "no root is pinned" in seen["unpinnedExport"]["problems"][0]
    assert seen["pinnedExport"]["ok"] is True


@pytest.fixture(scope="module")
def probed(built: Path, live_server: LiveServer) -> Any:
    """An outside attack suite's probes, run as it wrote them (tests/js/attack_probe.mjs):
    the npm client and the page's roll path behind an operator rewriting answers."""
    return run_node(
        ROOT / "tests" / "js" / "attack_probe.mjs",
        built,
        ROOT / "service" / "fairroll" / "page" / "static" / "verify.js",
        live_server.url,
        PINNED,
        "t-attack-probe",
        timeout=180,
    )


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        # The answer's outcome edited (the log holds the honest roll).
        ("npm-forged-outcome", "the log's entry is not this answer"),
        # Another request rolled in the player's session at the player's nonce.
        ("npm-another-request", "another request than the one this client sent"),
        # Another mechanic whose request holds every field sent (a complex check for a check).
        ("npm-another-mechanic", "not the stat-skill.check this client sent"),
    ],
)
def test_an_answer_that_is_not_the_logs_roll_of_the_request_sent_is_refused(
    probed: Any, attack: str, said: str
) -> None:
    assert probed[attack]["ok"] is False, probed[attack]
    assert said in probed[attack]["error"], probed[attack]


def test_the_page_counts_a_friends_cosignature_only_of_the_tree_it_shows() -> None:
    """table.js compareViews reads a cosigned tree from the note the cosigner signed, not
    the listing's fields the server writes: a pinned friend's cosignature of an old tree,
    relisted as the current one, confirms nothing."""
    seen = run_node(
        ROOT / "tests" / "js" / "page_cosigners_probe.mjs", ROOT / "service/fairroll/page/static"
    )
    assert "bob.example" not in seen["said"], seen
    assert "unconfirmed" in seen["said"], seen


@pytest.fixture(scope="module")
def retirements(built: Path, live_server: LiveServer) -> Any:
    """The npm client and the JS core's checkpoint check behind an operator whose
    ``GET /v1/keys`` marks its signing key retired while it signs on with it
    (tests/js/npm_retired.mjs)."""
    return run_node(
        ROOT / "tests" / "js" / "npm_retired.mjs",
        built,
        live_server.url,
        PINNED,
        "t-npm-retired",
        timeout=180,
    )


@pytest.mark.parametrize(
    "attack",
    [
        # The listing read once the key is retired: nothing it signs is trusted.
        "retired-in-the-listing",
        # Retired after the session read the listing: caught at its next chain.
        "retired-since-the-listing-was-read",
        # A checkpoint (the page's history check, the npm witness) by a retired key.
        "checkpoint-by-a-retired-key",
        # The log shows the key.retire at the checkpoint's own size.
        "checkpoint-at-its-keys-retirement",
    ],
)
def test_an_answer_or_checkpoint_signed_by_a_retired_key_is_refused(
    retirements: Any, attack: str
) -> None:
    """docs/audit.md, row 5: a key signs nothing after its ``key.retire``."""
    assert retirements[attack]["ok"] is False, retirements[attack]
    assert "retired" in retirements[attack]["error"], retirements[attack]


def test_a_checkpoint_signed_before_its_keys_retirement_still_holds(retirements: Any) -> None:
    """The honest case: the log shows the retirement after the note's size."""
    assert retirements["before-retirement"]["ok"], retirements
    assert retirements["checkpoint-before-its-keys-retirement"]["ok"], retirements
