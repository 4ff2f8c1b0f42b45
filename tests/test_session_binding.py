"""A seed session belongs to the player who opened it, even on an open table.

Issue 39: a stranger who read alice's ``seed_id`` in the log rolled in her session and
revealed it; alice's next roll got 409. The token answered at opening is the player's
credential (``Fairroll-Session-Token``); a stranger is refused 403.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest

from fairroll.redis_server import RedisServer
from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
HEADER = "Fairroll-Session-Token"


@pytest.fixture(scope="module")
def strict(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("strict") / "server.log"
    server = LiveServer(redis_server.url, log, env={"FAIRROLL_SESSION_TOKENS": "required"})
    yield server.url
    server.stop()


def open_session(client: httpx.Client, table: str) -> tuple[str, str]:
    opened = client.post(f"/v1/tables/{table}/seeds", json={"player": "alice"})
    assert opened.status_code == 201, opened.text
    return opened.json()["seed_id"], opened.json()["token"]


def roll(client: httpx.Client, table: str, seed_id: str, token: str | None) -> httpx.Response:
    headers = {HEADER: token} if token is not None else {}
    body: dict[str, Any] = {
        **BODY,
        "table": table,
        "session": {"seed_id": seed_id, "client_seed": secrets.token_hex(8)},
    }
    return client.post("/v1/tft/contests", json=body, headers=headers)


def test_a_stranger_can_neither_roll_in_nor_reveal_alices_session(strict: str, table: str) -> None:
    with httpx.Client(base_url=strict, timeout=10) as client:
        seed_id, token = open_session(client, table)
        for stranger in (None, "not-her-token"):
            refused = roll(client, table, seed_id, stranger)
            assert refused.status_code == 403, refused.text
            assert seed_id in refused.json()["detail"]
            headers = {HEADER: stranger} if stranger else {}
            reveal = client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal", headers=headers)
            assert reveal.status_code == 403, reveal.text
        mine = roll(client, table, seed_id, token)
        assert mine.status_code == 200, mine.text
        assert mine.json()["session"]["nonce"] == 1  # the refused calls took no nonce
        revealed = client.post(
            f"/v1/tables/{table}/seeds/{seed_id}/reveal", headers={HEADER: token}
        )
        assert revealed.status_code == 200, revealed.text


def test_under_optional_tokens_a_session_shown_its_token_is_bound(
    live_server: LiveServer, table: str
) -> None:
    """While clients learn to send the header, a session never shown its token takes
    rolls without one (old clients keep working); once its player's client showed it,
    nobody rolls in it without it, and a wrong token is refused from the start."""
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        seed_id, token = open_session(client, table)
        assert roll(client, table, seed_id, "wrong").status_code == 403
        assert roll(client, table, seed_id, None).status_code == 200  # an old client
        assert roll(client, table, seed_id, token).status_code == 200
        refused = roll(client, table, seed_id, None)
        assert refused.status_code == 403, refused.text
        reveal = client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal")
        assert reveal.status_code == 403, reveal.text


def test_a_session_token_sent_twice_is_refused(strict: str, table: str) -> None:
    with httpx.Client(base_url=strict, timeout=10) as client:
        seed_id, token = open_session(client, table)
        body = {**BODY, "table": table, "session": {"seed_id": seed_id, "client_seed": "c1"}}
        twice = [(HEADER.encode(), token.encode())] * 2
        assert client.post("/v1/tft/contests", json=body, headers=twice).status_code == 422


def test_the_python_client_sends_its_sessions_token_with_every_roll(
    fc: ModuleType, strict: str
) -> None:
    """A server that requires the token takes the client's rolls: the client keeps the
    token its session's opening showed and sends it with each roll, across a chain's end."""
    with fc.Fairroll(strict) as owner:
        made = owner.create_table()
    with fc.Fairroll(strict, made["write_key"], player="alice") as dice:
        dice.session(made["table"], length=2)
        nonces = [dice.roll_formula("1d20", table=made["table"])["session"]["nonce"]]
        nonces += [dice.roll_formula("1d20", table=made["table"])["session"]["nonce"]]
        nonces += [dice.roll_formula("1d20", table=made["table"])["session"]["nonce"]]
    assert nonces == [1, 2, 3]
