"""Sealed rolls on the table page, in Debian's chromium (tests/browser/sealed_page.mjs).

The page offers "roll sealed" beside the roll button; a sealed roll is checked live like
any session roll and shown to its roller with a reveal button; the table's list shows a
sealed line (who rolled it, for whom) and no dice until its reveal; the reveal shows the
dice the opening holds, with a mark that the opening matched the commitment, and the
sealed line then says it was revealed. A roll never revealed stays a sealed line.
"""

from __future__ import annotations

from typing import Any

import pytest

from fairroll.audit import load_signer
from support import TEST_SIGNING_KEY, LiveServer, browser_ready, run_node

PINNED = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id


@pytest.fixture(scope="module")
def seen(live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    driver = browser_ready() / "sealed_page.mjs"
    shot = tmp_path_factory.mktemp("sealed-page") / "sealed.png"
    said = run_node(
        driver, f"{live_server.url}/tables/t-sealed-page?root={PINNED}", shot, timeout=180
    )
    assert "error" not in said, (said["error"], said)
    assert said["errors"] == []
    return said


def test_the_roll_form_offers_a_sealed_roll_for_each_audience(seen: Any) -> None:
    assert seen["label"] == "Who sees it"
    assert [value for value, _ in seen["choices"]] == ["", "gm", "blind", "self"]
    # The spec's `sealed` field is the panel's own choice: never a typed blind in the form.
    assert seen["formFields"] == []


def test_a_sealed_roll_is_checked_for_its_roller_and_a_sealed_line_for_the_table(
    seen: Any,
) -> None:
    gm = seen["gm"]
    assert gm["result"]["className"] == "ok"
    assert "checked here" in gm["result"]["text"]
    assert f"the table sees only a sealed line at #{gm['seq']}" in gm["result"]["text"]
    assert seen["gmReveal"] == f"Reveal sealed roll #{gm['seq']}"
    assert seen["kept"] == [str(gm["seq"])]  # the opening kept in this browser
    line = gm["line"]
    assert line["className"] == "entry sealed"
    assert line["asked"] == f"sealed roll #{gm['seq']} by this browser, for the GM"
    assert line["dice"] == 0
    assert line["mark"].startswith("✓ verified")
    assert seen["heading"].startswith(f"#{gm['seq']} · Sealed roll · roll")
    blind = seen["blind"]["line"]
    assert blind["asked"].endswith("for the GM only (a blind roll)")


def test_a_reveal_shows_the_dice_and_that_the_opening_matched(seen: Any) -> None:
    revealed, blind = seen["revealed"], seen["blind"]
    assert revealed["ok"]
    assert revealed["asked"].startswith(f"sealed roll #{blind['seq']} revealed")
    assert len(revealed["dice"]) == 4  # 4d6kh3, one dropped
    assert "the opening matched" in revealed["mark"]
    after = seen["blindAfter"]
    assert after["className"] == "entry sealed revealed"
    assert after["outcome"] == f"revealed in #{revealed['seq']}: the opening matched its commitment"
    assert after["dice"] == 4
    # The GM roll not revealed stays a sealed line, offering its reveal to this browser.
    assert seen["gmAfter"] == {"className": "entry sealed", "dice": 0}
    gm = seen["gm"]["seq"]
    # The GM roll's line was drawn before its answer came (the test holds the answer back):
    # the line offers the reveal all the same.
    assert seen["lineBeforeAnswer"] is True
    assert seen["gmLineButton"] == f"Reveal sealed roll #{gm} (this browser holds its opening)"


def test_a_sealed_roll_is_revealed_later_from_its_line(seen: Any) -> None:
    """The opening kept in this browser reveals the roll whenever the player likes; then
    it is forgotten."""
    revealed = seen["gmRevealed"]
    assert revealed["className"] == "entry sealed revealed"
    assert revealed["outcome"].endswith(": the opening matched its commitment")
    assert revealed["dice"] == 4 and not revealed["button"]
    assert seen["keptAfter"] == []


@pytest.fixture(scope="module")
def hostile(live_server: LiveServer) -> Any:
    driver = browser_ready() / "sealed_hostile.mjs"
    said = run_node(driver, f"{live_server.url}/tables/t-sealed-hostile?root={PINNED}", timeout=180)
    assert "error" not in said, (said["error"], said)
    assert said["errors"] == []
    return said


@pytest.mark.parametrize(
    ("attack", "words"),
    [
        ("opening-does-not-open", "does not open the commitment"),
        ("another-blind", "the opening's blind is not the one this client drew"),
        ("receipt-of-another-roll", "the log's entry is not this sealed roll"),
    ],
)
def test_the_page_refuses_a_rewritten_sealed_answer(hostile: Any, attack: str, words: str) -> None:
    assert hostile["open"]["className"] == "ok"
    said = hostile[attack]
    assert said["className"] == "bad", said
    assert said["text"].startswith("✗ Not a fair roll: ")
    assert words in said["text"]
