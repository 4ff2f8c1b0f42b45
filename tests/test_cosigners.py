"""Cosigners that mean something (issue 38, item 7 and deliverable 6, the server's side).

The attack: the operator's API users posted a cosignature named ``bob.players.example``
under a key of their own, and the page and both clients counted "Bob"; anyone posted 256
cosignatures from fresh keys without a write key, after which a real player's was
refused ("the table keeps no more cosigners"). Now a post needs the table's write key or
an open seed session of the table and its token (an open table also keeps posts with
neither, in a small pool of their own); a name keeps the first key kept under it; each
credential has its own pool, whose stalest cosigner makes room, so strangers crowd out
no player; and the listing says which credential vouched for each cosigner. Real
redis-server, real HTTP."""

from __future__ import annotations

import time
from typing import Any

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from fairroll.audit.redis.cosignatures import ORIGIN_KEYS, SESSION_KEYS

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


class Cosigner:
    """A player's (or a stranger's) cosigning key under a name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.key = Ed25519PrivateKey.generate()
        self.vkey = verifier_key(name, raw_public_key(self.key))

    def body(self, note: str, stamp: int | None = None, **extra: Any) -> dict[str, Any]:
        line = cosign(note, self.name, self.key, stamp or int(time.time()))
        return {"vkey": self.vkey, "note": f"{note}{line}\n", **extra}


def note_of(client: httpx.Client, table: str, headers: dict[str, str] | None = None) -> str:
    rolled = client.post("/v1/tft/contests", json={**BODY, "table": table}, headers=headers)
    assert rolled.status_code == 200, rolled.text
    text: str = client.get(f"/v1/tables/{table}/checkpoint").json()["text"]
    return text


def session_of(
    client: httpx.Client, table: str, headers: dict[str, str] | None = None
) -> dict[str, str]:
    started = client.post(f"/v1/tables/{table}/seeds", headers=headers)
    assert started.status_code == 201, started.text
    answer = started.json()
    assert answer["token"], answer
    return {"seed_id": answer["seed_id"], "token": answer["token"]}


def listed(client: httpx.Client, table: str) -> dict[str, dict[str, Any]]:
    kept = client.get(f"/v1/tables/{table}/cosignatures").json()["cosignatures"]
    return {c["vkey"]: c for c in kept}


def test_a_keyed_table_takes_cosignatures_only_with_its_write_key_or_a_players_session(
    client: httpx.Client,
) -> None:
    """No credential is a 401, a wrong write key or a session token that is not the
    session's a 403, a revealed session's token a 403; the write key and an open
    session's token are kept, and the listing says which vouched for each."""
    created = client.post("/v1/tables").json()
    table, bearer = created["table"], {"Authorization": f"Bearer {created['write_key']}"}
    note = note_of(client, table, bearer)
    url = f"/v1/tables/{table}/cosignatures"
    stranger = Cosigner("stranger.example")
    assert client.post(url, json=stranger.body(note)).status_code == 401
    wrong = {"Authorization": "Bearer not-the-key"}
    assert client.post(url, json=stranger.body(note), headers=wrong).status_code == 403
    session = session_of(client, table, bearer)
    guessed = {"seed_id": session["seed_id"], "token": "x" * 32}
    assert client.post(url, json=stranger.body(note, session=guessed)).status_code == 403
    assert listed(client, table) == {}

    gm, roth = Cosigner("gm.example"), Cosigner("roth.players.example")
    by_key = client.post(url, json=gm.body(note), headers=bearer)
    assert by_key.status_code == 201, by_key.text
    by_session = client.post(url, json=roth.body(note, session=session))
    assert by_session.status_code == 201, by_session.text
    kept = listed(client, table)
    assert (kept[gm.vkey]["credential"], kept[gm.vkey]["seed_id"]) == ("write_key", None)
    assert (kept[roth.vkey]["credential"], kept[roth.vkey]["seed_id"]) == (
        "session",
        session["seed_id"],
    )
    revealed = client.post(f"/v1/tables/{table}/seeds/{session['seed_id']}/reveal", headers=bearer)
    assert revealed.status_code == 200
    late = Cosigner("late.players.example")
    assert client.post(url, json=late.body(note, session=session)).status_code == 403
    # The token is shown once: a session's status never carries it.
    status = client.get(f"/v1/tables/{table}/seeds/{session['seed_id']}").json()
    assert status["token"] is None


def test_a_cosigner_name_cannot_be_rekeyed_by_another_key(client: httpx.Client) -> None:
    """Bob cosigns first; the operator's API users (with the table's write key, or with
    none on an open table) then post under Bob's name with their own key: 409 naming
    ``vkey``, and the listing keeps only Bob's key. Bob himself goes on cosigning."""
    created = client.post("/v1/tables").json()
    keyed, bearer = created["table"], {"Authorization": f"Bearer {created['write_key']}"}
    for table, headers in ((keyed, bearer), (f"t-open-{keyed}", {})):
        note = note_of(client, table, headers)
        url = f"/v1/tables/{table}/cosignatures"
        bob = Cosigner("bob.players.example")
        session = session_of(client, table, headers)
        assert client.post(url, json=bob.body(note, session=session)).status_code == 201
        sybil = Cosigner("bob.players.example")
        for attempt in (
            client.post(url, json=sybil.body(note), headers=headers),
            client.post(url, json=sybil.body(note, session=session_of(client, table, headers))),
        ):
            assert attempt.status_code == 409, attempt.text
            problem = attempt.json()
            assert [p["name"] for p in problem["invalid_params"]] == ["vkey"], problem
            assert "bound" in problem["detail"], problem
        assert [c["vkey"] for c in listed(client, table).values()] == [bob.vkey]
        again = client.post(url, json=bob.body(note_of(client, table, headers), session=session))
        assert again.status_code == 201, again.text


def test_strangers_with_fresh_keys_cannot_lock_a_player_out(
    client: httpx.Client, table: str
) -> None:
    """256 cosignatures from fresh keys with no credential (an open table takes them),
    all from one address, hold only that address's few places of their own pool, whose
    stalest make room for the newest; a player with a session is kept after them, and
    so is a cosigner kept before them."""
    note = note_of(client, table)
    url = f"/v1/tables/{table}/cosignatures"
    early = Cosigner("early.players.example")
    early_session = session_of(client, table)
    assert client.post(url, json=early.body(note, session=early_session)).status_code == 201
    strangers = [Cosigner(f"s{i}.example") for i in range(256)]
    for stranger in strangers:
        posted = client.post(url, json=stranger.body(note))
        assert posted.status_code == 201, posted.text
    player = Cosigner("roth.players.example")
    kept = client.post(url, json=player.body(note, session=session_of(client, table)))
    assert kept.status_code == 201, kept.text
    assert kept.json()["credential"] == "session"
    again = client.post(url, json=early.body(note_of(client, table), session=early_session))
    assert again.status_code == 201, again.text
    found = listed(client, table)
    assert {player.vkey, early.vkey} <= set(found)
    anonymous = [c for c in found.values() if c["credential"] == "none"]
    assert len(anonymous) == ORIGIN_KEYS["none"]
    assert {c["vkey"] for c in anonymous} == {s.vkey for s in strangers[-ORIGIN_KEYS["none"] :]}


def test_one_session_cosigns_with_a_few_keys_not_a_flood(client: httpx.Client, table: str) -> None:
    """A session's keys are capped, so one session cannot churn the players' pool."""
    note = note_of(client, table)
    url = f"/v1/tables/{table}/cosignatures"
    session = session_of(client, table)
    for i in range(SESSION_KEYS):
        posted = client.post(url, json=Cosigner(f"k{i}.example").body(note, session=session))
        assert posted.status_code == 201, posted.text
    refused = client.post(url, json=Cosigner("one-more.example").body(note, session=session))
    assert refused.status_code == 422, refused.text
    assert [p["name"] for p in refused.json()["invalid_params"]] == ["vkey"]


def test_a_cosigners_credential_only_gets_stronger(client: httpx.Client, table: str) -> None:
    """A cosigner first kept with none, then with a session, is a session's cosigner; a
    relayed copy of its next cosignature posted with no credential keeps it so."""
    url = f"/v1/tables/{table}/cosignatures"
    roth = Cosigner("roth.players.example")
    assert client.post(url, json=roth.body(note_of(client, table))).status_code == 201
    assert listed(client, table)[roth.vkey]["credential"] == "none"
    session = session_of(client, table)
    assert client.post(url, json=roth.body(note_of(client, table), session=session)).is_success
    relayed = client.post(url, json=roth.body(note_of(client, table)))
    assert relayed.status_code == 201 and relayed.json()["credential"] == "session"
    kept = listed(client, table)[roth.vkey]
    assert (kept["credential"], kept["seed_id"]) == ("session", session["seed_id"])
    assert kept["size"] == client.get(f"/v1/tables/{table}/checkpoint").json()["size"]
