"""A client seed per chain, enforced by the server (issue 38, item 3 and deliverable 5).

A chain drawn after the server saw a client seed could have been ground for it: with a
chain of one link, a player who rolls twice with one client seed gets a second roll the
operator could choose (a d20 forced to 1 passes every check). So the append refuses a
committed roll whose client seed a roll of the table used at a seq before the entry that
committed the roll's chain (its ``session.commit``, or the ``session.renew`` of its
current chain): 422 naming ``session.client_seed``, no nonce taken. It refuses too a roll
whose client seed a roll used on another chain, wherever the chains stand (docs/audit.md
row 21: a server holding a pool of committed chains could pick the one that grinds a
seed it already saw). A client that draws a new client seed once it sees each chain's
anchor is never refused. Real redis-server,
real HTTP; ``docs/randomness.md``'s curl walk-through is run as written."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
from redis import Redis

from fairroll.audit.keyspace import client_seeds_key
from fairroll.audit.receipts import trusted_keys, verify_receipt
from support import LiveServer

ROOT = Path(__file__).resolve().parents[1]
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def start(client: httpx.Client, table: str, **body: Any) -> dict[str, Any]:
    made = client.post(f"/v1/tables/{table}/seeds", json=body or None)
    assert made.status_code == 201, made.text
    return made.json()


def roll(client: httpx.Client, table: str, seed_id: str, client_seed: str) -> httpx.Response:
    ref = {"seed_id": seed_id, "client_seed": client_seed}
    return client.post("/v1/tft/contests", json={**BODY, "table": table, "session": ref})


def status(client: httpx.Client, table: str, seed_id: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"/v1/tables/{table}/seeds/{seed_id}").json()
    return found


def assert_reused(answer: httpx.Response) -> None:
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert [p["name"] for p in problem["invalid_params"]] == ["session.client_seed"]
    assert problem["detail"].startswith("client seed reused"), problem
    assert "new client seed for each chain" in problem["detail"], problem


def test_one_client_seed_across_two_chains_is_refused_and_takes_no_nonce(
    client: httpx.Client, table: str
) -> None:
    """The curl player's habit on a chain of one link: the first roll uses the chain's
    last link, which commits the next chain; the same client seed on it is refused, the
    session stays at nonce 1, and a new client seed rolls nonce 2."""
    session = start(client, table, length=1)
    seed_id = session["seed_id"]
    assert roll(client, table, seed_id, "habit").json()["session"]["nonce"] == 1
    renewed = status(client, table, seed_id)
    assert (renewed["first_nonce"], renewed["rolls"]) == (2, 1)
    assert renewed["commitment"] != session["commitment"]
    assert_reused(roll(client, table, seed_id, "habit"))
    assert status(client, table, seed_id)["rolls"] == 1
    fresh = roll(client, table, seed_id, "drawn-after-the-anchor")
    assert fresh.status_code == 200, fresh.text
    assert fresh.json()["session"]["nonce"] == 2
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert report["ok"] and report["sources"] == {"committed": 2}, report


def test_a_new_session_refuses_a_client_seed_already_in_the_tables_log(
    client: httpx.Client, table: str
) -> None:
    """A session committed after a client seed was in the log (either kind of session)
    cannot roll with it; within its own chain the seed rolls again."""
    first = start(client, table)
    assert roll(client, table, first["seed_id"], "shared").status_code == 200
    for kind in ("chain", "commit"):
        after = start(client, table, kind=kind)
        assert_reused(roll(client, table, after["seed_id"], "shared"))
        assert status(client, table, after["seed_id"])["rolls"] == 0
    # Within its chain a client seed rolls as often as the player likes.
    assert roll(client, table, first["seed_id"], "shared").json()["session"]["nonce"] == 2


def test_a_client_seed_used_on_a_pre_committed_chain_is_refused_on_another(
    client: httpx.Client, table: str
) -> None:
    """docs/audit.md, row 21: "a client seed belongs to one chain". A pool of chains
    committed before any roll (here two sessions of either kind, and a session's chain
    whose seed went to another session) cannot take a client seed a roll on another chain
    used, though every chain was committed before the server saw it: the server could
    pick the chain that grinds it. Nothing is appended, no nonce taken, the log holds
    one roll; the other chain rolls with a seed of its own."""
    pool = [start(client, table), start(client, table, kind="commit"), start(client, table)]
    assert roll(client, table, pool[0]["seed_id"], "pooled").status_code == 200
    size = len(client.get(f"/v1/tables/{table}/entries").json()["entries"])
    for other in pool[1:]:
        refused = roll(client, table, other["seed_id"], "pooled")
        assert_reused(refused)
        assert "on another chain" in refused.json()["detail"], refused.text
        assert status(client, table, other["seed_id"])["rolls"] == 0
    assert len(client.get(f"/v1/tables/{table}/entries").json()["entries"]) == size
    own = roll(client, table, pool[1]["seed_id"], "its-own")
    assert own.status_code == 200, own.text
    assert own.json()["session"]["nonce"] == 1
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert report["ok"] and not report["not_fair"], report


def test_a_client_seed_kept_without_its_chain_is_still_named_not_fair_by_the_log(
    client: httpx.Client, redis_client: Redis, table: str
) -> None:
    """A client seed the append kept before chains were kept (a bare seq in the table's
    client seeds) has no chain to compare: the append holds it to the first rule only
    (no script error), and the table's verification, which reads the log, names the
    roll on another chain not fair."""
    pool = [start(client, table), start(client, table)]
    first = roll(client, table, pool[0]["seed_id"], "kept-before")
    seq = first.json()["receipt"]["seq"]
    key = client_seeds_key(table)
    assert redis_client.hget(key, "kept-before") == f"{seq} 1".encode()
    redis_client.hset(key, "kept-before", str(seq))
    again = roll(client, table, pool[1]["seed_id"], "kept-before")
    assert again.status_code == 200, again.text
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert report["ok"], report
    assert [n["seq"] for n in report["not_fair"]] == [again.json()["receipt"]["seq"]], report
    assert report["not_fair"][0]["why"].startswith("client seed reused"), report


def test_a_client_that_draws_a_new_seed_per_chain_is_never_refused(
    client: httpx.Client, table: str
) -> None:
    """The rule as the clients follow it: a client seed drawn once the chain's anchor
    is in the log (GET .../seeds/{seed_id} shows it), kept for the chain's rolls; across
    four chains of three links, every roll is made and the log verifies."""
    seed_id = start(client, table, length=3)["seed_id"]
    anchors: dict[str, str] = {}
    for _ in range(12):
        seen = status(client, table, seed_id)
        client_seed = anchors.setdefault(seen["commitment"], f"seed-{len(anchors)}")
        answer = roll(client, table, seed_id, client_seed)
        assert answer.status_code == 200, answer.text
        assert answer.json()["session"]["commitment"] == seen["commitment"]
    assert len(anchors) == 4
    report = client.get(f"/v1/tables/{table}/verification").json()
    assert report["ok"] and report["sources"] == {"committed": 12}, report


def test_a_status_poll_signs_nothing_and_the_receipt_is_asked_for(
    client: httpx.Client, table: str
) -> None:
    """The session's status is what a client polls: it carries no receipt, so it signs
    no checkpoint (a poll would cost a signature each). A client about to draw a chain's
    client seed asks ``?receipt=true`` and gets the receipt of the entry that committed
    the chain, which checks under the pinned root."""
    seed_id = start(client, table, length=1)["seed_id"]
    assert roll(client, table, seed_id, "first").status_code == 200
    polled = status(client, table, seed_id)
    assert polled["receipt"] is None and polled["chain_seq"] == 3, polled
    asked = client.get(f"/v1/tables/{table}/seeds/{seed_id}", params={"receipt": "true"})
    made = asked.json()["receipt"]
    assert asked.status_code == 200 and made["seq"] == polled["chain_seq"], made
    served = client.get("/v1/keys").json()
    entry = client.get(f"/v1/tables/{table}/entries/{made['seq']}").json()
    assert verify_receipt(entry, made, trusted_keys(served, served["root"]))[0] == 3


def test_the_documented_curl_walk_through_rolls_fair_with_one_extra_field(
    live_server: LiveServer, table: str, tmp_path: Path
) -> None:
    """docs/randomness.md's curl lines, run as written (the server's address and the
    table swapped in): open a session, roll twice with a client seed of
    ``openssl rand -hex 16``; the rolls are committed, on nonces 1 and 2."""
    text = (ROOT / "docs" / "randomness.md").read_text()
    section = text.split("## A fair roll with curl", 1)[1]
    script = re.search(r"```sh\n(.*?)```", section, re.S)
    assert script is not None
    commands = (
        script.group(1)
        .replace("localhost:8000", live_server.url)
        .replace("/tables/my-table/", f"/tables/{table}/")
        .replace('"table": "my-table"', f'"table": "{table}"')
    )
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        entries = [
            e
            for e in client.get(f"/v1/tables/{table}/entries").json()["entries"]
            if e["source"] == "committed"
        ]
    assert [e["session"]["nonce"] for e in entries] == [1, 2], entries
    assert len({e["session"]["client_seed"] for e in entries}) == 1
    assert re.fullmatch(r"[0-9a-f]{32}", entries[0]["session"]["client_seed"])
