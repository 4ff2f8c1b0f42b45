"""The Python client's sealed rolls (``roll(..., sealed=...)``, ``reveal_sealed``), checked
live the way a dishonest operator would test them: the client draws the blind itself and
holds the answer to the format's "answer" rules (docs/audit.md, "Sealed rolls"). The
client is built as a plugin author gets it (pip, the core vendored); a real server and a
real Redis answer, and an httpx transport between them rewrites what the operator could.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import httpx
import pytest

from support import TEST_ROOT, LiveServer

TFT = "/v1/tft/contests"
BODY = {"a": {"name": "Roth", "attribute": 16, "talents": 2}, "b": {"attribute": 12}}
Rewrite = Callable[[httpx.Request, httpx.Response | None], httpx.Response | None]


class Operator(httpx.BaseTransport):
    """The real server behind an operator: ``rewrite(request, None)`` may answer a request
    itself; ``rewrite(request, answer)`` may replace the server's answer."""

    def __init__(self, rewrite: Rewrite) -> None:
        self.real = httpx.HTTPTransport()
        self.rewrite = rewrite
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        instead = self.rewrite(request, None)
        if instead is not None:
            return instead
        answer = self.real.handle_request(request)
        answer.read()
        return self.rewrite(request, answer) or answer


def _answering(body: Any, status: int) -> httpx.Response:
    kind = "application/problem+json" if status >= 400 else "application/json"
    return httpx.Response(status, headers={"content-type": kind}, content=json.dumps(body))


def _player(fc: ModuleType, server: LiveServer, rewrite: Rewrite) -> Any:
    with fc.Fairroll(server.url) as honest:
        made = honest.create_table()
    operator = Operator(rewrite)
    dice = fc.Fairroll(
        server.url, made["write_key"], player="Roth", transport=operator, root=TEST_ROOT
    )
    dice.table, dice.operator = made["table"], operator
    return dice


def _honest(_: httpx.Request, __: httpx.Response | None) -> None:
    return None


def _forwarding(change: Callable[[dict[str, Any]], None]) -> Rewrite:
    """An operator that rolls the player's sealed request changed by ``change`` (the
    server records and signs that roll as it would the player's own)."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is not None or request.method != "POST" or request.url.path != TFT:
            return None
        body = json.loads(request.content)
        change(body)
        headers = dict(request.headers)
        headers.pop("content-length", None)
        forged = httpx.Request("POST", request.url, headers=headers, content=json.dumps(body))
        with httpx.Client() as http:
            real = http.send(forged)
        return _answering(real.json(), real.status_code)

    return rewrite


def _answer_edited(change: Callable[[dict[str, Any]], None]) -> Rewrite:
    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is None or request.method != "POST" or request.url.path != TFT:
            return None
        said = answer.json()
        change(said)
        return _answering(said, answer.status_code)

    return rewrite


def test_a_sealed_roll_is_checked_and_revealed(fc: ModuleType, live_server: LiveServer) -> None:
    dice = _player(fc, live_server, _honest)
    rolled = dice.roll(TFT, {**BODY, "table": dice.table}, sealed="blind")
    assert rolled["checked"] == f"verified under root {TEST_ROOT}"
    assert rolled["mechanic"] == "sealed.roll" and rolled["opening"]["mechanic"] == "tft.contest"
    rolls = [r for r in dice.operator.sent if r.method == "POST" and r.url.path == TFT]
    sent = json.loads(rolls[-1].content)
    assert sent["sealed"]["audience"] == "blind"
    assert sent["sealed"]["blind"] == rolled["opening"]["blind"]  # the client drew it
    assert len(sent["sealed"]["blind"]) == 64
    seq = rolled["receipt"]["seq"]
    revealed = dice.reveal_sealed(dice.table, seq, rolled["opening"])
    assert revealed["seq"] == seq and revealed["reveal_seq"] > seq
    with pytest.raises(fc.FairrollError) as again:
        dice.reveal_sealed(dice.table, seq, rolled["opening"])
    assert again.value.status == 409
    assert dice.verify(dice.table, root=TEST_ROOT).ok


def test_a_blind_the_operator_swapped_is_unfair(fc: ModuleType, live_server: LiveServer) -> None:
    # A server-drawn (or operator-swapped) blind could be ground for the dice it gives.
    def ground(body: dict[str, Any]) -> None:
        body["sealed"]["blind"] = "0f" * 32

    dice = _player(fc, live_server, _forwarding(ground))
    with pytest.raises(fc.UnfairRollError, match="blind"):
        dice.roll(TFT, {**BODY, "table": dice.table}, sealed="gm")


def test_a_refused_sealed_roll_keeps_its_blind_at_its_nonce(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The server sees a sealed roll's blind, so its dice, before it answers: a refusal
    (a 429 here, any status) followed by a fresh blind at the same nonce would let it turn
    down dice it dislikes and take others. The client draws one blind per nonce, whatever
    the roll asked there (the same roll, another audience), so the dice are fixed there."""
    refusals = [2]

    def refusing(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        posted = request.method == "POST" and request.url.path == TFT
        if answer is None and posted and refusals[0]:
            refusals[0] -= 1
            return _answering({"status": 429, "detail": "too many requests"}, 429)
        return None

    dice = _player(fc, live_server, refusing)
    for audience in ("gm", "self"):
        with pytest.raises(fc.FairrollError) as refused:
            dice.roll(TFT, {**BODY, "table": dice.table}, sealed=audience)
        assert refused.value.status == 429
    rolled = dice.roll(TFT, {**BODY, "table": dice.table}, sealed="gm")
    rolls = [r for r in dice.operator.sent if r.method == "POST" and r.url.path == TFT]
    sent = [json.loads(r.content) for r in rolls]
    assert len(sent) == 3
    assert {s["session"]["nonce"] for s in sent} == {rolled["session"]["nonce"]}
    assert {s["sealed"]["blind"] for s in sent} == {rolled["opening"]["blind"]}


def test_a_nonce_lie_after_a_sealed_roll_gives_back_the_roll_the_log_holds(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The operator rolls the player's sealed roll, then answers 409 naming the next
    nonce, as if another roll held this one: the client finds its own sealed roll at the
    nonce it sent, opens it again with its blind and the request sent, and returns it
    checked against the commitment: the lie neither loses the roll nor changes its dice."""

    def lying(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is None or request.method != "POST" or request.url.path != TFT:
            return None
        nonce = json.loads(request.content)["session"]["nonce"]
        return _answering({"status": 409, "detail": "nonce taken", "nonce": nonce + 1}, 409)

    dice = _player(fc, live_server, lying)
    rolled = dice.roll(TFT, {**BODY, "table": dice.table}, sealed="gm")
    assert rolled["checked"] == f"verified under root {TEST_ROOT}"
    [sent] = [json.loads(r.content) for r in dice.operator.sent if r.url.path == TFT]
    assert rolled["opening"]["blind"] == sent["sealed"]["blind"]
    seq = rolled["receipt"]["seq"]
    assert dice.reveal_sealed(dice.table, seq, rolled["opening"])["seq"] == seq


def test_another_audience_than_the_one_sent_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    def shown_to_all(body: dict[str, Any]) -> None:
        body["sealed"]["audience"] = "gm"

    dice = _player(fc, live_server, _forwarding(shown_to_all))
    with pytest.raises(fc.UnfairRollError, match="audience"):
        dice.roll(TFT, {**BODY, "table": dice.table}, sealed="self")


def test_an_edited_outcome_in_the_answer_is_unfair(fc: ModuleType, live_server: LiveServer) -> None:
    def better(said: dict[str, Any]) -> None:
        for outcome in (said["outcome"], said["opening"]["outcome"]):
            outcome["victor"] = "b" if outcome.get("victor") == "a" else "a"

    dice = _player(fc, live_server, _answer_edited(better))
    with pytest.raises(fc.UnfairRollError, match="does not open the commitment"):
        dice.roll(TFT, {**BODY, "table": dice.table}, sealed="gm")


def test_answer_dice_that_are_not_the_openings_are_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    def sixes(said: dict[str, Any]) -> None:
        said["dice"] = [{**die, "face": die["sides"]} for die in said["dice"]]

    dice = _player(fc, live_server, _answer_edited(sixes))
    with pytest.raises(fc.UnfairRollError, match="dice"):
        dice.roll(TFT, {**BODY, "table": dice.table}, sealed="gm")


def test_sealed_outside_the_clients_session_is_refused_before_sending(
    fc: ModuleType, live_server: LiveServer
) -> None:
    dice = _player(fc, live_server, _honest)
    with pytest.raises(ValueError, match="sealed roll"):
        dice.roll(TFT, {**BODY, "table": dice.table, "seed": "x"}, sealed="gm")
    with pytest.raises(ValueError, match="sealed roll"):
        dice.roll(TFT, {**BODY, "table": dice.table}, sealed="gm", fair=False)
    with pytest.raises(ValueError, match="gm, blind or self"):
        dice.roll(TFT, {**BODY, "table": dice.table}, sealed="everyone")


def test_a_sealed_dice_formula_is_checked(fc: ModuleType, live_server: LiveServer) -> None:
    # A GM's roll behind the screen is most often a formula (Foundry's /gmroll 1d20+5).
    dice = _player(fc, live_server, _honest)
    rolled = dice.roll_formula("1d20+5 # Perception", table=dice.table, sealed="gm")
    assert rolled["checked"] == f"verified under root {TEST_ROOT}"
    assert rolled["opening"]["mechanic"] == "dice.roll"
    assert rolled["outcome"] == rolled["opening"]["outcome"]
