"""A seed session belongs to the player who opened it, even on an open table.

Issue 39: a stranger who read alice's ``seed_id`` in the log rolled in her session and
revealed it; alice's next roll got 409. The token answered at opening is the player's
credential (``Fairroll-Session-Token``); a stranger is refused 403. The server requires
it by default; ``FAIRROLL_SESSION_TOKENS=optional`` is an operator's opt-in for clients
from before the header.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest

from fairroll.api.settings import Settings
from fairroll.redis_server import RedisServer
from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
HEADER = "Fairroll-Session-Token"


@pytest.fixture(scope="module")
def lenient(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose operator opted into ``optional`` tokens."""
    log = tmp_path_factory.mktemp("lenient") / "server.log"
    server = LiveServer(redis_server.url, log, env={"FAIRROLL_SESSION_TOKENS": "optional"})
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


def test_sessions_belong_to_their_player_by_default() -> None:
    assert Settings.from_env({}).session_tokens == "required"
    assert Settings().session_tokens == "required"
    assert Settings.from_env({"FAIRROLL_SESSION_TOKENS": "optional"}).session_tokens == "optional"
    with pytest.raises(ValueError, match="FAIRROLL_SESSION_TOKENS"):
        Settings.from_env({"FAIRROLL_SESSION_TOKENS": "maybe"})


def test_a_stranger_who_read_the_seed_id_is_refused_on_an_open_table_by_default(
    live_server: LiveServer, table: str
) -> None:
    """Issue 39's attack on the default settings (the shared server sets no token
    policy): alice opens a session on an open table; a stranger reads its ``seed_id`` in
    the public log and, without her token or with a made-up one, tries to roll in it and
    to reveal it. Each try is refused 403 and takes nothing: alice's first roll is nonce
    1, and her session is still open for her to reveal."""
    with httpx.Client(base_url=live_server.url, timeout=10) as alice:
        seed_id, token = open_session(alice, table)
    with httpx.Client(base_url=live_server.url, timeout=10) as stranger:
        entries = stranger.get(f"/v1/tables/{table}/entries").json()["entries"]
        read = next(e["request"]["seed_id"] for e in entries if e["mechanic"] == "session.commit")
        assert read == seed_id  # the seed_id is public
        for guess in (None, "not-her-token"):
            refused = roll(stranger, table, read, guess)
            assert refused.status_code == 403, refused.text
            assert read in refused.json()["detail"]
            headers = {HEADER: guess} if guess else {}
            reveal = stranger.post(f"/v1/tables/{table}/seeds/{read}/reveal", headers=headers)
            assert reveal.status_code == 403, reveal.text
    with httpx.Client(base_url=live_server.url, timeout=10) as alice:
        mine = roll(alice, table, seed_id, token)
        assert mine.status_code == 200, mine.text
        assert mine.json()["session"]["nonce"] == 1  # the refused calls took no nonce
        assert roll(alice, table, seed_id, token).json()["session"]["nonce"] == 2
        revealed = alice.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal", headers={HEADER: token})
        assert revealed.status_code == 200, revealed.text


def test_under_optional_tokens_a_session_shown_its_token_is_bound(lenient: str, table: str) -> None:
    """Where the operator opted into ``optional`` for clients from before the header, a
    session never shown its token takes rolls without one (old clients keep working);
    once its player's client showed it, nobody rolls in it without it, and a wrong token
    is refused from the start."""
    with httpx.Client(base_url=lenient, timeout=10) as client:
        seed_id, token = open_session(client, table)
        assert roll(client, table, seed_id, "wrong").status_code == 403
        assert roll(client, table, seed_id, None).status_code == 200  # an old client
        assert roll(client, table, seed_id, token).status_code == 200
        refused = roll(client, table, seed_id, None)
        assert refused.status_code == 403, refused.text
        reveal = client.post(f"/v1/tables/{table}/seeds/{seed_id}/reveal")
        assert reveal.status_code == 403, reveal.text


def test_a_session_token_sent_twice_is_refused(live_server: LiveServer, table: str) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        seed_id, token = open_session(client, table)
        body = {**BODY, "table": table, "session": {"seed_id": seed_id, "client_seed": "c1"}}
        twice = [(HEADER.encode(), token.encode())] * 2
        assert client.post("/v1/tft/contests", json=body, headers=twice).status_code == 422


def test_the_python_client_sends_its_sessions_token_with_every_roll(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The default server, which requires the token, takes the client's rolls: the client
    keeps the token its session's opening showed and sends it with each roll, across a
    chain's end."""
    with fc.Fairroll(live_server.url) as owner:
        made = owner.create_table()
    with fc.Fairroll(live_server.url, made["write_key"], player="alice") as dice:
        dice.session(made["table"], length=2)
        nonces = [dice.roll_formula("1d20", table=made["table"])["session"]["nonce"]]
        nonces += [dice.roll_formula("1d20", table=made["table"])["session"]["nonce"]]
        nonces += [dice.roll_formula("1d20", table=made["table"])["session"]["nonce"]]
    assert nonces == [1, 2, 3]


def test_the_spec_bounds_the_session_token_as_the_server_reads_it() -> None:
    """The spec says what the server accepts: the token header's bound is the one every
    header fairroll reads is held to."""
    from fairroll.api.request_headers import HEADER_BYTES  # noqa: PLC0415
    from fairroll.spec.openapi import _SESSION_TOKEN  # noqa: PLC0415

    assert _SESSION_TOKEN.schema is not None
    assert _SESSION_TOKEN.schema.max_length == HEADER_BYTES  # type: ignore[union-attr]
