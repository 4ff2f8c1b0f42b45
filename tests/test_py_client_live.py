"""The Python client checks every answer live, as a dishonest operator would test it
(issue 38, the Python client's side).

The client is built as a plugin author gets it (pip, the verification core vendored at
build time) into a folder of its own and imported here; a real server and a real Redis
answer, and an httpx transport between them rewrites the answers the way an operator
holding the signing key and the Redis could: another client seed, another player's
session, a receipt whose proof, note size, origin or key is not the log's, a 409 that
names another nonce after it rolled, a session closed under the player. Each attack ends
in ``UnfairRollError`` (or the named refusal), never in dice returned as fair.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import httpx
import msgspec
import pytest

from fairroll.audit import load_signer
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.signing import Signer
from support import TEST_ROOT, TEST_SIGNING_KEY, LiveServer

ROLLS = "/v1/dice/rolls"
Rewrite = Callable[[httpx.Request, httpx.Response | None], httpx.Response | None]


class Operator(httpx.BaseTransport):
    """The real server behind a dishonest operator: ``rewrite(request, answer)`` sees
    each request before it is sent (``answer`` None: return a response to answer it
    without the server, or None to send it) and each answer after."""

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


def said(answer: httpx.Response) -> Any:
    return json.loads(answer.content)


def answering(body: Any, status: int = 200) -> httpx.Response:
    ctype = "application/problem+json" if status >= 400 else "application/json"
    return httpx.Response(status, headers={"content-type": ctype}, content=json.dumps(body))


def roll_answer(request: httpx.Request, answer: httpx.Response | None) -> bool:
    return answer is not None and request.method == "POST" and request.url.path == ROLLS


def player(
    fc: ModuleType, server: LiveServer, rewrite: Rewrite, *, length: int = 5, **options: Any
) -> Any:
    """A player's client on a fresh table, its session open, behind ``rewrite`` (the
    transport: ``dice.operator``)."""
    with fc.Fairroll(server.url) as honest:
        made = honest.create_table()
    table = made["table"]
    operator = Operator(rewrite)
    dice = fc.Fairroll(server.url, made["write_key"], player="Roth", transport=operator, **options)
    dice.table, dice.operator = table, operator
    dice.session(table, length=length)
    return dice


def pass_through(_: httpx.Request, __: httpx.Response | None) -> None:
    return None


def log_of(fc: ModuleType, server: LiveServer, table: str) -> list[dict[str, Any]]:
    with fc.Fairroll(server.url) as reader:
        return list(reader.all_entries(table))


# -- every answer checked live, under the pinned root ---------------------------------


def test_an_honest_answer_is_verified_under_the_pinned_root(
    fc: ModuleType, live_server: LiveServer
) -> None:
    dice = player(fc, live_server, pass_through, root=TEST_ROOT)
    rolled = dice.roll_formula("2d6", table=dice.table)
    assert rolled["checked"] == f"verified under root {TEST_ROOT}"
    assert rolled["source"] == "committed"


def test_without_a_pinned_root_the_answer_says_not_verified(
    fc: ModuleType, live_server: LiveServer
) -> None:
    dice = player(fc, live_server, pass_through)
    rolled = dice.roll_formula("2d6", table=dice.table)
    assert rolled["checked"].startswith("NOT VERIFIED")
    assert "verified under" not in rolled["checked"]


def forwarding(
    change: Callable[[dict[str, Any]], None], tokens: dict[str, str] | None = None
) -> Rewrite:
    """An operator that rolls the player's request changed by ``change`` (the server
    then records and signs that roll, as it would the player's own). The operator runs
    the server, which drew every session's token: it shows the one of the session it
    rolls in (the player's own rode in on the request; another's from ``tokens``)."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is not None or request.method != "POST" or request.url.path != ROLLS:
            return None
        body = json.loads(request.content)
        change(body)
        headers = dict(request.headers)
        headers.pop("content-length", None)
        token = (tokens or {}).get(body["session"]["seed_id"])
        if token is not None:
            headers["fairroll-session-token"] = token
        forged = httpx.Request("POST", request.url, headers=headers, content=json.dumps(body))
        with httpx.Client() as http:
            real = http.send(forged)
        return answering(said(real), real.status_code)

    return rewrite


def test_a_roll_under_the_operators_client_seed_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    def operators_seed(body: dict[str, Any]) -> None:
        body["session"]["client_seed"] = "the-operators-own-seed"

    dice = player(fc, live_server, forwarding(operators_seed), root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="client seed"):
        dice.roll_formula("1d20", table=dice.table)


def test_a_roll_in_another_players_session_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    holder: dict[str, str] = {}
    tokens: dict[str, str] = {}

    def other_session(body: dict[str, Any]) -> None:
        body["session"]["seed_id"] = holder["other"]
        body["session"]["nonce"] = 1

    dice = player(fc, live_server, forwarding(other_session, tokens), root=TEST_ROOT)
    sheena = fc.Fairroll(live_server.url, dice.write_key, player="Sheena")
    other = sheena.session(dice.table)
    holder["other"] = other.seed_id
    tokens[other.seed_id] = other.state().token
    with pytest.raises(fc.UnfairRollError, match="this player's session"):
        dice.roll_formula("1d20", table=dice.table)


def receipt_rewrite(change: Callable[[dict[str, Any]], None]) -> Rewrite:
    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if not roll_answer(request, answer):
            return None
        assert answer is not None
        body = said(answer)
        change(body["receipt"])
        return answering(body)

    return rewrite


def flipped_proof(receipt: dict[str, Any]) -> None:
    raw = bytearray(base64.b64decode(receipt["proof"][0]))
    raw[0] ^= 1
    receipt["proof"][0] = base64.b64encode(bytes(raw)).decode()


def edited_size(receipt: dict[str, Any]) -> None:
    origin, size, rest = receipt["checkpoint"].split("\n", 2)
    receipt["checkpoint"] = f"{origin}\n{int(size) + 1}\n{rest}"


def operator() -> Signer:
    return load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)


def resigned_elsewhere(receipt: dict[str, Any]) -> None:
    """The same tree, signed with the real key under another table's origin."""
    _, size, root, chain = receipt["checkpoint"].split("\n")[:4]
    note = sign_checkpoint(
        operator(), "another-table", int(size), base64.b64decode(root), chain.split(" ")[1]
    )
    receipt["checkpoint"] = note.text


@pytest.mark.parametrize(
    "attack",
    [flipped_proof, edited_size, resigned_elsewhere],
    ids=["a flipped proof hash", "an edited note size", "another table's origin"],
)
def test_a_receipt_the_log_does_not_prove_is_unfair(
    fc: ModuleType, live_server: LiveServer, attack: Callable[[dict[str, Any]], None]
) -> None:
    dice = player(fc, live_server, pass_through, root=TEST_ROOT)
    dice.roll_formula("1d20", table=dice.table)  # a tree of more than one leaf: a proof
    dice.operator.rewrite = receipt_rewrite(attack)
    with pytest.raises(fc.UnfairRollError):
        dice.roll_formula("1d20", table=dice.table)


def test_a_note_signed_by_a_key_the_root_did_not_certify_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The operator signs the receipt's note with a key of its own and serves that key
    under the real key id in ``GET /v1/keys``, certified by a root of its own."""
    stranger = Signer.generate()

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is None:
            return None
        if request.url.path == "/v1/keys":
            keys = said(answer)
            for key in keys["keys"]:
                key["public_key"] = stranger.public_key.public_key
                key["certificate"] = msgspec.to_builtins(stranger.certificate)
            return answering(keys)
        if not roll_answer(request, answer):
            return None
        body = said(answer)
        _, size, root, chain = body["receipt"]["checkpoint"].split("\n")[:4]
        note = sign_checkpoint(
            stranger, body["receipt"]["table"], int(size), base64.b64decode(root), chain[6:]
        )
        body["receipt"]["checkpoint"] = note.text
        return answering(body)

    dice = player(fc, live_server, pass_through, root=TEST_ROOT)  # opened honestly
    dice.operator.rewrite = rewrite
    with pytest.raises(fc.UnfairRollError, match="not certified by the pinned root"):
        dice.roll_formula("1d20", table=dice.table)


# -- a 409 never lets the operator choose -----------------------------------------------


def nonce_of(request: httpx.Request) -> int:
    return int(json.loads(request.content)["session"]["nonce"])


def elsewhere(nonce: int) -> httpx.Response:
    """The 409 the server answers when the session is at another nonce."""
    return answering(
        {"status": 409, "detail": f"the session is at nonce {nonce}", "nonce": nonce}, 409
    )


def test_a_nonce_lie_returns_the_roll_made_at_the_nonce_sent(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The operator rolls at nonce N, dislikes the dice, and answers 409 naming N+1: the
    roll at N is the player's, and the client returns it (checked) instead of moving on."""
    lied: list[int] = []

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if not roll_answer(request, answer) or lied:
            return None
        lied.append(nonce_of(request))
        return elsewhere(lied[0] + 1)

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    rolled = dice.roll_formula("1d20", table=dice.table)
    assert rolled["session"]["nonce"] == lied[0] == 1
    assert rolled["checked"] == f"verified under root {TEST_ROOT}"
    rolls = [e for e in log_of(fc, live_server, dice.table) if e["source"] == "committed"]
    assert [(e["session"]["nonce"], e["dice"]) for e in rolls] == [(1, rolled["dice"])]


def test_another_roll_at_the_nonce_sent_is_unfair(fc: ModuleType, live_server: LiveServer) -> None:
    """The operator rolls something else at the player's nonce (a formula of its own),
    then answers 409 naming the next nonce."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is not None or request.method != "POST" or request.url.path != ROLLS:
            return None
        forward = forwarding(lambda body: body.update(formula="1d4"))
        forward(request, None)
        return answering(
            {"status": 409, "detail": "elsewhere", "nonce": nonce_of(request) + 1}, 409
        )

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="nonce 1 of this session holds a roll"):
        dice.roll_formula("1d20", table=dice.table)


def test_a_nonce_refused_again_and_again_is_sent_the_same_and_then_given_up(
    fc: ModuleType, live_server: LiveServer
) -> None:
    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is not None or request.method != "POST" or request.url.path != ROLLS:
            return None
        return answering(
            {"status": 409, "detail": "elsewhere", "nonce": nonce_of(request) + 1}, 409
        )

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.NonceRefusedError, match="refuses nonce 1"):
        dice.roll_formula("1d20", table=dice.table)
    sent = [r for r in dice.operator.sent if r.url.path == ROLLS]
    assert len(sent) >= 2
    assert {json.dumps(json.loads(r.content)["session"]) for r in sent} == {
        json.dumps(json.loads(sent[0].content)["session"])
    }
    assert {r.headers["idempotency-key"] for r in sent} == {sent[0].headers["idempotency-key"]}
    assert [e["mechanic"] for e in log_of(fc, live_server, dice.table)] == ["session.commit"]


def test_a_revealed_session_is_not_replaced_by_a_fresh_one(
    fc: ModuleType, live_server: LiveServer
) -> None:
    dice = player(fc, live_server, pass_through, root=TEST_ROOT)
    opened = dice.session(dice.table)
    token = {"Fairroll-Session-Token": opened.state().token}
    dice.call("POST", f"/v1/tables/{dice.table}/seeds/{opened.seed_id}/reveal", headers=token)
    seed_id = opened.seed_id
    with pytest.raises(fc.SessionClosedError):
        dice.roll_formula("1d20", table=dice.table)
    commits = [e for e in log_of(fc, live_server, dice.table) if e["mechanic"] == "session.commit"]
    assert len(commits) == 1
    fresh = dice.session(dice.table, new=True)  # on purpose, the player told
    assert fresh.seed_id != seed_id
    assert dice.roll_formula("1d20", table=dice.table)["session"]["seed_id"] == fresh.seed_id


def test_a_missing_session_is_not_replaced_by_a_fresh_one(
    fc: ModuleType, live_server: LiveServer
) -> None:
    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is not None or request.method != "POST" or request.url.path != ROLLS:
            return None
        return answering({"status": 404, "detail": "no such seed session"}, 404)

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.SessionClosedError):
        dice.roll_formula("1d20", table=dice.table)
    commits = [e for e in log_of(fc, live_server, dice.table) if e["mechanic"] == "session.commit"]
    assert len(commits) == 1


def test_a_used_up_chain_the_server_does_not_renew_is_not_replaced(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The server answers that the used-up chain has no next one (its status says the
    old chain): the client raises, it does not open a new session on its own."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is None or request.method != "GET" or "/seeds/" not in request.url.path:
            return None
        status = said(answer)
        status["first_nonce"] = 1
        return answering(status)

    dice = player(fc, live_server, rewrite, root=TEST_ROOT, length=1)
    dice.roll_formula("1d20", table=dice.table)
    with pytest.raises(fc.SessionClosedError, match="used up its chain"):
        dice.roll_formula("1d20", table=dice.table)
    commits = [e for e in log_of(fc, live_server, dice.table) if e["mechanic"] == "session.commit"]
    assert len(commits) == 1


# -- a new client seed per chain ------------------------------------------------------


def test_each_chain_gets_a_new_client_seed_after_its_renewal(
    fc: ModuleType, live_server: LiveServer
) -> None:
    dice = player(fc, live_server, pass_through, root=TEST_ROOT, length=1)
    rolls = [dice.roll_formula("1d20", table=dice.table) for _ in range(3)]
    seeds = [r["session"]["client_seed"] for r in rolls]
    assert [r["session"]["first_nonce"] for r in rolls] == [1, 2, 3]
    assert len(set(seeds)) == 3
    log = log_of(fc, live_server, dice.table)
    renewals = [e["seq"] for e in log if e["mechanic"] == "session.renew"]
    for seed, renewal in zip(seeds[1:], renewals, strict=False):
        first = min(e["seq"] for e in log if (e.get("session") or {}).get("client_seed") == seed)
        assert first > renewal  # drawn after its chain was committed
    report = dice.verify(dice.table)
    assert report.ok and report.not_fair == (), report


# -- cosigners that mean something ----------------------------------------------------


def test_a_cosigner_counts_only_under_a_key_the_player_trusts(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """Roth trusts Sheena's key (exchanged outside the server). The operator posts a
    cosignature of the same tree named ``bob.players.example`` under a key of its own:
    it is reported as unknown, never as a confirmation."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    dice = player(fc, live_server, pass_through, root=TEST_ROOT)
    dice.roll_formula("1d20", table=dice.table)
    roth = fc.TableWitness.new(dice, dice.table, name="roth.players.example", root=TEST_ROOT)
    sheena = fc.TableWitness.new(dice, dice.table, name="sheena.players.example", root=TEST_ROOT)
    roth.trust(sheena.vkey)
    sheena.check()
    note = dice.call("GET", f"/v1/tables/{dice.table}/checkpoint")["text"]
    sybil = Ed25519PrivateKey.generate()
    bob = fc.witness.verifier_key("bob.players.example", fc.witness.raw_public_key(sybil))
    cosigned = fc.witness.cosign_note(note, "bob.players.example", sybil, 1_700_000_000)
    dice.call("POST", f"/v1/tables/{dice.table}/cosignatures", json={"vkey": bob, "note": cosigned})
    seen = roth.check()
    assert seen.confirmed_by == ["sheena.players.example"]
    assert seen.unknown == ["bob.players.example"]


def test_a_note_with_a_failing_line_of_a_known_cosigner_is_rejected(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """Sheena's good cosignature line followed by a bad one under her key: the note is
    refused, whichever line comes first."""
    dice = player(fc, live_server, pass_through, root=TEST_ROOT)
    dice.roll_formula("1d20", table=dice.table)
    roth = fc.TableWitness.new(dice, dice.table, name="roth.players.example", root=TEST_ROOT)
    sheena = fc.TableWitness.new(dice, dice.table, name="sheena.players.example", root=TEST_ROOT)
    roth.trust(sheena.vkey)
    good = sheena.check().cosigned
    line = good.rstrip("\n").rsplit("\n", 1)[1]
    name, signature = line.rsplit(" ", 1)
    raw = bytearray(base64.b64decode(signature))
    raw[-1] ^= 1
    bad = f"{name} {base64.b64encode(bytes(raw)).decode()}"
    for note in (f"{good}{bad}\n", good.replace(line, bad) + line + "\n"):
        with pytest.raises(fc.ViewError, match=r"sheena\.players\.example"):
            roth.compare(note)


def test_a_session_committed_for_another_player_is_refused(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The client asks for a session for Roth with chains of 5 links; the operator opens
    one for Mallory with chains of 1 (an outside attack suite's probe): the log's
    commitment is not the session asked for, and nothing is rolled in it."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if (
            answer is not None
            or request.method != "POST"
            or not request.url.path.endswith("/seeds")
        ):
            return None
        headers = {k: v for k, v in request.headers.items() if k != "content-length"}
        body = {"player": "Mallory", "length": 1}
        with httpx.Client() as http:
            real = http.send(
                httpx.Request("POST", request.url, headers=headers, content=json.dumps(body))
            )
        return answering(said(real), real.status_code)

    with pytest.raises(fc.UnfairRollError, match="another session than the one asked for"):
        player(fc, live_server, rewrite, root=TEST_ROOT)  # opens Roth's session


def test_a_line_separator_in_a_name_does_not_split_an_export(
    fc: ModuleType, client: httpx.Client, table: str
) -> None:
    """RFC 8785 leaves U+2028 unescaped: an NDJSON export is split at "\\n" only, or an
    honest log holding a player's name with it would fail in this client alone."""
    body = {"table": table, "a": {"name": "Roth\u2028", "attribute": 12}, "b": {"attribute": 12}}
    assert client.post("/v1/tft/contests", json=body).is_success
    text = client.get(f"/v1/tables/{table}/export").text
    verdict = fc.verify_export(text, client.get("/v1/keys").json(), root=TEST_ROOT)
    assert verdict.ok, verdict


def test_a_404_after_rolling_gives_back_the_roll_made(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The operator rolls the player's request at nonce N, looks at the die, and answers
    404 (an outside attack suite's probe): the roll the log holds at N is the player's,
    so the client returns it instead of telling the player to start a new session."""
    made: list[int] = []

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if (
            request.method == "POST"
            and request.url.path == ROLLS
            and answer is not None
            and not made
        ):
            made.append(said(answer)["dice"][0]["face"])
            gone = {"title": "Not Found", "status": 404, "detail": "no such seed session"}
            return answering(gone, 404)
        return None

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    rolled = dice.roll_formula("1d20", table=dice.table)
    assert rolled["dice"][0]["face"] == made[0]
    assert rolled["session"]["nonce"] == 1


# -- a retired key signs nothing new (docs/audit.md, row 5) ------------------------------


def retired_listing(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
    """``GET /v1/keys`` listing the signing key as retired (``not_after``), while the
    operator, who still holds it, signs every answer with it."""
    if answer is None or request.url.path != "/v1/keys":
        return None
    keys = said(answer)
    for key in keys["keys"]:
        key["not_after"] = "2026-12-01T00:00:00.000Z"
    return answering(keys)


def test_an_answer_signed_by_a_key_the_listing_retired_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """Row 5: a key signs nothing after its retirement. The listing says the key that
    signs the session's commitment and its rolls is retired, and no seq of its
    ``key.retire`` is known: nothing it signed is trusted."""
    with pytest.raises(fc.UnfairRollError, match="retired"):
        player(fc, live_server, retired_listing, root=TEST_ROOT)


def test_an_answer_signed_by_a_key_retired_since_the_listing_was_read_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The key is retired after this client read the listing (the session opened under
    it), and the operator keeps signing with it: the next chain's listing says so."""
    dice = player(fc, live_server, pass_through, root=TEST_ROOT, length=1)
    dice.roll_formula("1d20", table=dice.table)
    dice.operator.rewrite = retired_listing
    with pytest.raises(fc.UnfairRollError, match="retired"):
        dice.roll_formula("1d20", table=dice.table)


def retired_in_the_log(at: int, *, listed: bool) -> Rewrite:
    """The entries the client reads show a ``key.retire`` of the signing key at seq
    ``at`` (first of each page); ``listed``: ``GET /v1/keys`` marks it retired too."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if listed and request.url.path == "/v1/keys":
            return retired_listing(request, answer)
        if answer is None or not request.url.path.endswith("/entries"):
            return None
        page = said(answer)
        key_id = operator().key_id
        retire = {"seq": at, "mechanic": "key.retire", "request": {"key_id": key_id}}
        page["entries"] = [retire, *page["entries"]]
        page["words"] = [None, *(page.get("words") or [])]
        return answering(page)

    return rewrite


def test_a_key_retired_later_in_the_log_still_proves_what_it_signed_before(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The honest case of row 5: the listing marks the key retired, and the log shows its
    ``key.retire`` at a seq past the notes it signed: they hold."""
    dice = player(fc, live_server, pass_through, root=TEST_ROOT, length=1)
    dice.roll_formula("1d20", table=dice.table)
    dice.operator.rewrite = retired_in_the_log(10_000, listed=True)
    rolled = dice.roll_formula("1d20", table=dice.table)
    assert rolled["checked"] == f"verified under root {TEST_ROOT}"


def test_a_note_signed_after_its_keys_retirement_in_the_log_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The listing says nothing, but the log the client reads shows the key retired at
    seq 1: every note of the session is of a later size."""
    dice = player(fc, live_server, pass_through, root=TEST_ROOT, length=1)
    dice.roll_formula("1d20", table=dice.table)
    dice.operator.rewrite = retired_in_the_log(1, listed=False)
    with pytest.raises(fc.UnfairRollError, match="retired at seq 1 of this log"):
        dice.roll_formula("1d20", table=dice.table)
