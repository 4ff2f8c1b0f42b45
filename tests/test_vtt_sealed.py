"""Sealed rolls in the VTT integrations, in Chromium (tests/browser/foundry_sealed.mjs,
owlbear_sealed.mjs), with the modules as the server serves them.

Foundry's roll modes map onto sealed rolls: a public roll is an ordinary roll; a GM roll
is sealed for the GM, a blind roll for the GM only, a self roll for the roller only. Each
message is whispered as Foundry whispers that mode and carries the roll's opening in its
flags; the GM's client checks it against the log itself and can reveal it; a message
whose opening was edited is not marked verified. Owlbear offers a GM roll: the room sees
a sealed line (checked in the log), then the reveal, checked by every player.
"""

from __future__ import annotations

from typing import Any

import pytest

from support import LiveServer, browser_ready, run_node
from test_vtt_integrations import built, forged_table, installed, server, site, static

__all__ = ["built", "installed", "server", "site", "static"]  # the fixtures this module uses


@pytest.fixture(scope="module", params=[12, 13], ids=["foundry12", "foundry13"])
def foundry(
    request: pytest.FixtureRequest,
    installed: dict[str, Any],
    server: LiveServer,
    static: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Any:
    forged, _ = forged_table(server, tmp_path_factory.mktemp("foundry-sealed"))
    module = installed["url"]
    url = (
        f"{static}/tests/vtt/foundry-host.html?module={module}/dist/fairroll.js"
        f"&manifest={module}/module.json&generation={request.param}"
        f"&table={forged['table']}&root={forged['root']}"
    )
    seen = run_node(browser_ready() / "foundry_sealed.mjs", url, timeout=180)
    assert "error" not in seen, seen
    assert seen["errors"] == [], seen["errors"]
    return seen


def test_foundry_gm_roll_is_sealed_for_the_gm_and_whispered_to_the_gm(foundry: Any) -> None:
    gm = foundry["gm"]
    assert gm["sealed"]["audience"] == "gm" and gm["verified"] and gm["agree"], gm
    assert gm["whisper"] == ["u-gamemaster"] and not gm["blind"]
    assert gm["flagged"] == [{"seq": gm["sealed"]["seq"], "audience": "gm", "opening": True}]
    assert "for the GM: the opening matched its commitment" in gm["card"]


def test_foundry_blind_roll_hides_its_dice_from_the_roller(foundry: Any) -> None:
    blind = foundry["blind"]
    assert blind["sealed"]["audience"] == "blind" and blind["verified"], blind
    assert blind["whisper"] == ["u-gamemaster"] and blind["blind"]
    assert blind["card"] == f"sealed blind roll #{blind['sealed']['seq']}, for the GM only"
    assert blind["dice"] is None


def test_foundry_self_roll_is_whispered_to_the_roller_alone(foundry: Any) -> None:
    own = foundry["self"]
    assert own["sealed"]["audience"] == "self" and own["verified"], own
    assert own["whisper"] == ["u-roth"]
    assert foundry["public"]["sealed"] is None and foundry["public"]["whisper"] == []


def test_foundry_gm_checks_the_whispered_openings_and_reveals_one(foundry: Any) -> None:
    gm, blind = foundry["gm"]["sealed"]["seq"], foundry["blind"]["sealed"]["seq"]
    sealed_cards = [card for card in foundry["gmCards"] if "sealed roll #" in card]
    assert len(sealed_cards) == 2, foundry["gmCards"]  # the GM and blind rolls, not the self roll
    assert all("✓ verified by Gamemaster" in card for card in sealed_cards), sealed_cards
    assert foundry["gmButtons"] == [f"Reveal sealed roll #{gm}", f"Reveal sealed roll #{blind}"]
    # Sue, another player, gets no sealed roll: Foundry whispered them elsewhere.
    assert not any("sealed" in card for card in foundry["sueCards"]), foundry["sueCards"]
    logged = {entry["seq"]: entry for entry in foundry["log"]}
    assert logged[gm]["mechanic"] == logged[blind]["mechanic"] == "sealed.roll"
    reveal = [entry for entry in foundry["log"] if entry["mechanic"] == "sealed.reveal"]
    assert [entry["reveals"] for entry in reveal] == [gm]
    assert foundry["revealedSaid"] == f"revealed on the table's log at entry {reveal[0]['seq']}"


def test_foundry_gm_does_not_mark_an_edited_opening_verified(foundry: Any) -> None:
    forged = foundry["forged"]
    assert forged is not None
    assert "not verified" in forged["card"]
    assert "does not open the commitment" in forged["card"]
    assert not forged["reveal"]


def test_foundry_gm_compares_the_message_with_the_opening_itself(foundry: Any) -> None:
    """A cheating player's message shows another formula and total than the sealed roll it
    opens, its own record saying they agree: the GM's client compares Foundry's roll with
    the opening it checked and raises the alarm; an honest message raises none."""
    relabelled = foundry["relabelled"]
    assert relabelled is not None
    assert "is not the one opened" in relabelled["said"], relabelled
    assert foundry["gmAlarms"] == [], foundry["gmAlarms"]


@pytest.fixture(scope="module")
def owlbear(
    built: Any, server: LiveServer, static: str, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    _, path = forged_table(server, tmp_path_factory.mktemp("owlbear-sealed"))
    extension = f"{server.url}/integrations/owlbear/popover.html"
    url = f"{static}/tests/vtt/owlbear-host.html?extension={extension}"
    seen = run_node(browser_ready() / "owlbear_sealed.mjs", url, path, timeout=180)
    assert "error" not in seen, seen
    assert seen["errors"] == [], seen["errors"]
    return seen


def test_owlbear_gm_roll_is_a_sealed_line_for_the_room(owlbear: Any) -> None:
    assert owlbear["option"].strip().startswith("GM roll")
    assert "sealed roll #" in owlbear["gmCard"] and "for the GM" in owlbear["gmCard"]
    assert owlbear["gmButton"].startswith("Reveal sealed roll #")
    # The room hears of the roll, not its dice or opening (Owlbear's broadcast reaches all).
    [said] = owlbear["sealedBroadcast"]
    assert set(said) == {"player", "seq", "audience", "receipt"} and said["audience"] == "gm"
    assert owlbear["rollBroadcasts"] == 0
    line = owlbear["playerLine"]
    assert f"sealed roll #{said['seq']}, for the GM" in line and "✓ in the signed log" in line


def test_owlbear_sealed_line_is_checked_against_the_entrys_audience(owlbear: Any) -> None:
    """A broadcast announcing a sealed roll the entry does not hold (here: for the GM only,
    where the log seals it for the GM and roller) is not marked: the player's popover
    reads the entry, not the sender's word."""
    line = owlbear["misannounced"]
    assert "✓" not in line and "not verified" in line, line
    assert "is sealed for 'gm', not 'blind'" in line, line


def test_owlbear_reveal_is_checked_by_the_other_players(owlbear: Any) -> None:
    assert owlbear["gmRevealed"].startswith("revealed on the table's log at entry ")
    said = owlbear["playerReveal"]
    assert "revealed" in said and "✓ verified by you" in said
    assert "the opening matched its commitment" in said
