"""The table page in a real browser: Debian's chromium, driven by playwright-core.

Open a table's page, see its rolls newest first with their dice and each one's
verified mark; roll again and see the new entry arrive live; tamper with an entry
in Redis and see the page flag exactly that one. Screenshots go to the test's
temporary folder (docs/ keeps the README's copy).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import msgspec
import pytest
import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import load_signer, merkle
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from fairroll.audit.redis.cosignatures import CosignedCheckpoint
from fairroll.audit.signing import certify
from fairroll.redis_server import RedisServer, free_port
from support import TEST_SIGNING_KEY, LiveServer, browser_ready, run_node

PINNED = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id

BROWSER = Path(__file__).resolve().parent / "browser"
CONTEST = {
    "a": {"name": "Roth", "attribute": 16, "talents": 2},
    "b": {"attribute": 12},
    "victory_levels": True,
}


@pytest.fixture(scope="module")
def browser_driver() -> Path:
    return browser_ready() / "page.mjs"


def open_page(driver: Path, url: str, shot: Path, seq: int, width: int = 900) -> Any:
    seen = run_node(driver, url, shot, seq, width, timeout=90)
    assert seen["errors"] == []
    return seen


def test_the_page_shows_and_verifies_rolls_live(
    browser_driver: Path,
    live_server: LiveServer,
    client: httpx.Client,
    table: str,
    tmp_path: Path,
) -> None:
    rolls = [
        ("/v1/tft/contests", {**CONTEST, "seed": "page-1"}),
        ("/v1/fbc/rolls", {"pool": 10, "risk": 5, "dice": {"risk": [2, 1, 1, 4, 5]}}),
        (
            "/v1/fast-battle/attacks",
            {
                "attacker": {
                    "name": "Zippy",
                    "st": 3,
                    "qk": 1,
                    "in": 1,
                    "ma": 1,
                    "mr": 2,
                    "max_hp": 6,
                    "weapon": "Standard Issue Sword",
                },
                "defender": {
                    "name": "Grub",
                    "st": 3,
                    "qk": 2,
                    "in": 1,
                    "ma": 2,
                    "mr": 1,
                    "max_hp": 7,
                    "armor": "Light Robe",
                },
                "seed": "page-3",
            },
        ),
    ]
    for path, body in rolls:
        assert client.post(path, json={**body, "table": table}).status_code == 200
    url = f"{live_server.url}/tables/{table}?root={PINNED}"
    seen = open_page(browser_driver, url, tmp_path / "table.png", 3)
    entries = seen["entries"]
    assert [e["seq"] for e in entries] == [3, 2, 1]  # newest first
    assert all(e["ok"] and e["mark"].startswith("✓ verified") for e in entries), entries
    assert "dice re-derived from the seed" in entries[2]["mark"]  # seeded TFT roll
    assert re.fullmatch(r"(Roth|B) wins — Level \d victory|No victor: .*", entries[2]["outcome"])
    assert entries[1]["dice"] == [f"risk: {f} on a d6" for f in (2, 1, 1, 4, 5)]
    assert entries[1]["outcome"] == "2 successes; Pool 7"
    assert {d.split(": ")[1] for d in entries[0]["dice"]} <= {"heads", "tails"}
    assert seen["status"].startswith("3 entries, live")

    # Live: a roll made after the page opened appears (the script waits for seq 4).
    assert client.post("/v1/tft/contests", json={**CONTEST, "table": table}).status_code == 200
    seen = open_page(browser_driver, url, tmp_path / "table-4.png", 4, width=380)
    assert [e["seq"] for e in seen["entries"]] == [4, 3, 2, 1]


def test_the_page_flags_an_entry_tampered_with_in_redis(
    browser_driver: Path,
    live_server: LiveServer,
    redis_server: RedisServer,
    client: httpx.Client,
    table: str,
    tmp_path: Path,
) -> None:
    for i in range(3):
        body = {**CONTEST, "seed": f"tamper-{i}", "table": table}
        assert client.post("/v1/tft/contests", json=body).status_code == 200
    store = redis.Redis.from_url(redis_server.url)
    key = f"fairroll:{{{table}}}:log"
    rows = store.xrange(key)
    entry = json.loads(zlib.decompress(rows[1][1][b"z"], wbits=-15))
    entry["outcome"]["victor"] = "b" if entry["outcome"]["victor"] == "a" else "a"
    rows[1][1][b"z"] = zlib.compress(json.dumps(entry).encode(), 3, wbits=-15)
    store.delete(key)  # rewrite the stream with entry 2 altered (stream ids only grow)
    for stream_id, fields in rows:
        store.xadd(key, fields, id=stream_id)
    store.close()

    seen = open_page(
        browser_driver, f"{live_server.url}/tables/{table}?root={PINNED}", tmp_path / "t.png", 3
    )
    marks = {e["seq"]: e for e in seen["entries"]}
    assert marks[1]["ok"] and marks[3]["ok"]
    assert not marks[2]["ok"]
    assert "entry_hash does not match" in marks[2]["mark"]
    assert "1 failed verification" in seen["status"]


def roll_operations() -> set[str]:
    """The roll mechanics of the committed spec: POST bodies carrying the envelope's table."""
    spec = json.loads((Path(__file__).resolve().parents[1] / "openapi/openapi.json").read_text())
    schemas = spec["components"]["schemas"]
    found = set()
    for methods in spec["paths"].values():
        body = methods.get("post", {}).get("requestBody", {}).get("content", {})
        schema = body.get("application/json", {}).get("schema", {})
        ref = (schema.get("allOf") or [schema])[0].get("$ref", "")
        if "table" in schemas.get(ref.rsplit("/", 1)[-1], {}).get("properties", {}):
            found.add(methods["post"]["operationId"])
    return found


def test_a_gm_rolls_every_mechanic_from_the_page(
    browser_driver: Path,
    live_server: LiveServer,
    client: httpx.Client,
    table: str,
    tmp_path: Path,
) -> None:
    url = f"{live_server.url}/tables/{table}?root={PINNED}"
    seen = run_node(browser_driver.with_name("roll.mjs"), url, tmp_path, timeout=240)
    assert seen["errors"] == []

    # Keyboard only: Tab reaches the mechanic, End and the arrows pick TFT, Tab reaches
    # Side A's name, Enter rolls; a roll the rules refuse shows the problem and focuses the field.
    keyboard = seen["keyboard"]
    assert keyboard["first"] == "mechanic"
    assert keyboard["second"] == "f-a-name"
    assert keyboard["result"]["ok"], keyboard
    # Fair by default: the page opened this browser's hash-chain seed session (seq 1) and
    # rolled in it.
    assert keyboard["result"]["text"].startswith("Rolled #2 in your seed session (nonce 1): ")
    assert (
        keyboard["asked"] == "Keyboard Roth (attribute 16, 2 talents) against Sheena (attribute 12)"
    )
    assert not keyboard["refused"]["ok"]
    assert "needs an attribute" in keyboard["refused"]["text"]
    assert keyboard["invalid"] == ["f-a-attribute"] == [keyboard["focusAfterProblem"]]

    # Forms that change shape: Tribute's optional opponent switched on in place of a
    # difficulty; a third fighter added (odds cover two), rolled, and removed by keyboard.
    by_hand = seen["byHand"]
    # The page names no system by hand: labels are the spec's titles, and a store item's
    # field suggests the names the store operation (found in the spec) answers.
    assert {"ST (strength)", "MR (magical resistance)", "Max HP", "HP now (optional)"} <= set(
        by_hand["labels"]
    ), by_hand["labels"]
    store = client.get("/v1/fast-battle/store").json()
    assert by_hand["weapons"] == [weapon["name"] for weapon in store["weapons"]]
    assert by_hand["opponentDisabled"]
    # Odds take the roll's own input: a Test against an opponent has its odds too.
    assert by_hand["tributeOdds"].startswith("Exact odds of the input")
    assert by_hand["tribute"]["ok"] and by_hand["tribute"]["result"]["ok"]
    assert by_hand["tribute"]["asked"].endswith("rank 0 against the GM")
    assert by_hand["rows"] == ["Fighter 1", "Fighter 2", "Fighter 3"]
    assert by_hand["focusAfterAdd"] == "f-fighters-2-name"
    # Battle odds take what a battle takes: three fighters are estimated by seeded battles.
    assert by_hand["battleOdds"].startswith("Estimated odds of the input as it stands, from ")
    assert by_hand["battle"]["ok"]
    assert by_hand["battle"]["asked"] == "Battle: Zippy the Mean against Grub against Third"
    assert by_hand["rowsAfterRemove"] == ["Fighter 1", "Fighter 2"]
    assert by_hand["focusAfterRemove"] == "Add fighter"
    # Back to two fighters: the exact chain solves Zippy against Grub.
    assert by_hand["battleOddsAfterRemove"].startswith("Exact odds")

    # The odds follow the input: Roth's attribute typed from 16 down to 8.
    following = seen["following"]
    assert following["captionBefore"] == "Who wins (7 dice against 4)"
    assert following["captionAfter"] == "Who wins (4 dice against 4)"
    assert float(following["after"].split()[0]) < float(following["before"].split()[0])
    assert following["restored"] == following["before"]

    # Phone width: no form wider than the screen, every text still legible.
    assert seen["phone"] == {"overflow": {}, "low": []}
    assert (tmp_path / "table-page.png").stat().st_size > 10_000
    assert (tmp_path / "table-page-phone.png").stat().st_size > 10_000

    rolled = {r["id"]: r for r in seen["rolled"]}
    assert set(rolled) == roll_operations()  # one form per roll mechanic of the spec
    for operation, r in rolled.items():
        assert r["result"]["ok"], (operation, r["result"])
        entry = r["entry"]
        assert entry["ok"] and entry["mark"].startswith("✓ verified"), (operation, entry)
        # Rolled here, so in this browser's seed session: fair, and every die re-derived.
        assert entry["fairness"].startswith("✓ fair: rolled in a seed session"), entry
        assert not entry["dice"] or entry["mark"].endswith(
            "re-derived from the chain's revealed link"
        )
        # The checked facts under the mark; the server's words apart, never under it.
        facts, words = r["result"]["text"].split("The server's words (not checked): ")
        assert " — ✓ checked here: " in facts, facts
        assert facts.endswith("and the receipt under the pinned root"), facts
        assert words.endswith(entry["outcome"]) and "✓" not in words, (words, entry)
        assert r["survey"] == {"unlabelled": [], "low": []}, (operation, r["survey"])
        # Every form's odds are exact, Zippy against Grub too: the chain solves two fighters.
        assert r["odds"]["note"].startswith("Exact odds"), (operation, r["odds"])
        assert r["odds"]["bars"] >= 2, (operation, r["odds"])
    assert rolled["rollFbc"]["entry"]["dice"] and rolled["fightFastBattle"]["entry"]["dice"]

    # What the page wrote is what the server holds: one entry per roll, a sound chain.
    verdict = client.get(f"/v1/tables/{table}/verification").json()
    assert verdict["ok"] and verdict["entries"] == 1 + 1 + len(rolled) + 2, verdict
    assert verdict["sources"] == {"committed": 1 + len(rolled) + 2}, verdict
    assert verdict["unrevealed"] == 0  # every roll verified as it came


def test_a_key_rotated_while_the_page_is_open_is_fetched_not_flagged(
    browser_driver: Path, tmp_path: Path
) -> None:
    # A Redis of its own: the second signing key is published there and nowhere else.
    redis_server = RedisServer(tmp_path / "redis", port=free_port()).start()
    first = second = page = None
    try:
        first = LiveServer(redis_server.url, tmp_path / "first.log")
        body = {**CONTEST, "table": "rotation"}
        assert httpx.post(f"{first.url}/v1/tft/contests", json=body).status_code == 200
        node = shutil.which("node")
        assert node is not None
        url = f"{first.url}/tables/rotation?root={PINNED}"
        page = subprocess.Popen(
            [node, str(browser_driver), url, str(tmp_path / "rotated.png"), "2", "900", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert page.stderr is not None
        assert page.stderr.readline().strip() == "shown"  # the page holds the first key only
        # The new key, certified by the first one (the root): a rotation done right.
        new_key = base64.b64encode(b"k" * 32).decode()
        root = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
        new = load_signer(key=new_key, key_file=None, dev_dir=None)
        certificate = msgspec.json.encode(certify(root, new.public_key.public_key)).decode()
        second = LiveServer(
            redis_server.url,
            tmp_path / "second.log",
            env={"FAIRROLL_SIGNING_KEY": new_key, "FAIRROLL_KEY_CERTIFICATE": certificate},
        )
        assert httpx.post(f"{second.url}/v1/tft/contests", json=body).status_code == 200
        out, err = page.communicate(timeout=90)
    finally:
        if page is not None and page.poll() is None:
            page.kill()
        for server in (first, second):
            if server is not None:
                server.stop()
        redis_server.stop()
    assert page.returncode == 0, out + err
    seen = json.loads(out)
    assert seen["errors"] == []
    assert [(e["seq"], e["ok"]) for e in seen["entries"]] == [(2, True), (1, True)], seen


@pytest.mark.parametrize(
    ("path", "selector", "text"),
    [
        ("/schema", "#redoc h1", "fairroll"),  # Redoc, from fairroll's own static files
        ("/tables/{table}", "li[data-seq='1'] .mark", ""),  # the table page, its charts too
        ("/docs/rules/dice", "#doc h1", "Dice formulas"),  # a rules page, rendered here
        ("/", "h1", "fairroll"),
    ],
    ids=["docs", "table", "rules-page", "home"],
)
def test_pages_keep_to_their_content_security_policy(
    browser_driver: Path, client: httpx.Client, table: str, path: str, selector: str, text: str
) -> None:
    """No inline script, no CDN: nothing the policy blocks, nothing from another origin."""
    client.post("/v1/tft/contests", json={**CONTEST, "table": table})
    url = str(client.base_url).rstrip("/") + path.format(table=table)
    seen = run_node(browser_driver.with_name("policy.mjs"), url, selector, text, timeout=90)
    assert seen == {"violations": [], "foreign": [], "errors": []}


def test_an_archived_table_verifies_from_its_base_in_the_page(
    browser_driver: Path,
    redis_server: RedisServer,
    client: httpx.Client,
    table: str,
    tmp_path: Path,
) -> None:
    """Seqs 1..2 archived (``fairroll archive``): the page starts at 3, links it to the
    signed base, and marks every kept entry verified."""
    for n in range(4):
        client.post("/v1/tft/contests", json={**CONTEST, "table": table, "seed": f"a/{n}"})
    env = {**os.environ, "REDIS_URL": redis_server.url, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY}
    command = ["archive", table, "--through", "2", "--out", str(tmp_path / "old.ndjson")]
    archived = subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *command],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert archived.returncode == 0, archived.stdout + archived.stderr
    url = str(client.base_url).rstrip("/") + f"/tables/{table}?root={PINNED}"
    seen = open_page(browser_driver, url, tmp_path / "archived.png", 4)
    assert [(e["seq"], e["ok"]) for e in seen["entries"]] == [(4, True), (3, True)]


def _revisit(driver: Path, url: str, between: Any) -> Any:
    """Open the page, do ``between`` while it stays open, reload it: both history checks."""
    node = shutil.which("node")
    assert node is not None
    process = subprocess.Popen(
        [node, str(driver.parent / "revisit.mjs"), url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None and process.stdin is not None
        assert process.stderr.readline().strip() == "shown"
        between()
        process.stdin.write("go\n")
        process.stdin.flush()
        out, err = process.communicate(timeout=90)
    finally:
        process.kill()
    assert process.returncode == 0, err
    seen = json.loads(out)
    assert seen["errors"] == []
    return seen


def test_the_page_keeps_a_checkpoint_and_catches_a_rewritten_history(
    browser_driver: Path, redis_server: RedisServer, tmp_path: Path, table: str
) -> None:
    """A player's browser keeps the last checkpoint it verified. An operator who rewrites
    the table's tree in Redis, forgets the last signed checkpoint and restarts fairroll
    (so the server signs the new history) is caught on the player's next visit: the new
    checkpoint is not consistent with the kept one."""
    port = free_port()
    servers = [LiveServer(redis_server.url, tmp_path / "first.log", port=port)]
    try:
        with httpx.Client(base_url=servers[0].url, timeout=10) as client:
            for _ in range(3):
                assert (
                    client.post("/v1/tft/contests", json={**CONTEST, "table": table}).status_code
                    == 200
                )

        def honest() -> None:
            with httpx.Client(base_url=servers[0].url, timeout=10) as client:
                assert (
                    client.post("/v1/tft/contests", json={**CONTEST, "table": table}).status_code
                    == 200
                )

        seen = _revisit(browser_driver, f"{servers[0].url}/tables/{table}?root={PINNED}", honest)
        assert seen["first"].startswith("✓ signed checkpoint of 3 entries checked and kept")
        # The open page may already have verified and kept the fourth roll's checkpoint
        # (its live feed) before the reload: either kept size is an honest history.
        assert seen["second"].startswith("✓ signed checkpoint of 4 entries"), seen
        assert re.search(
            r"consistent with the one this browser kept \([34] entries", seen["second"]
        )

        def rewrite() -> None:
            servers[0].stop()
            store = redis.Redis.from_url(redis_server.url)
            # The tree of 4 entries re-rooted: its one complete subtree's hash replaced.
            slot = merkle.stored_index(2, 0) * merkle.HASH_SIZE
            store.setrange(f"fairroll:{{{table}}}:tree", slot, b"\x66" * 32)
            store.delete(f"fairroll:{{{table}}}:signed")
            servers.append(LiveServer(redis_server.url, tmp_path / "second.log", port=port))

        seen = _revisit(browser_driver, f"{servers[0].url}/tables/{table}?root={PINNED}", rewrite)
        assert seen["second"].startswith("✗ history check failed"), seen
    finally:
        for server in servers:
            server.stop()


def _cosigned_by_another(
    redis_url: str,
    table: str,
    note: str,
    *,
    size: int,
    root_hash: str,
    name: str,
    key: Ed25519PrivateKey | None = None,
) -> str:
    """Another player's cosignature of ``note``, as the server keeps one; its vkey."""
    key = key or Ed25519PrivateKey.generate()
    vkey = verifier_key(name, raw_public_key(key))
    line = cosign(note, name, key, int(time.time()))
    kept = CosignedCheckpoint(
        name=name,
        vkey=vkey,
        size=size,
        root_hash=root_hash,
        time=int(time.time()),
        note=f"{note}{line}\n",
    )
    store = redis.Redis.from_url(redis_url)
    store.hset(f"fairroll:{{{table}}}:cosignatures", vkey, msgspec.json.encode(kept))
    return vkey


def test_the_page_cosigns_what_it_verified_and_counts_the_other_players(
    browser_driver: Path, live_server: LiveServer, redis_server: RedisServer, table: str
) -> None:
    """The page cosigns the checkpoint it verified (its own WebCrypto key) and says its
    view is unconfirmed until a cosignature of the same tree arrives from a player whose
    key this player pinned (Sheena's, shared with her over another channel). A cosigner
    nobody pinned (the operator's "bob", a Sybil) is listed as unknown, never counted."""
    sheena = Ed25519PrivateKey.generate()
    sheena_vkey = verifier_key("sheena.players.example", raw_public_key(sheena))
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        assert client.post("/v1/tft/contests", json={**CONTEST, "table": table}).is_success
        checkpoint = client.get(f"/v1/tables/{table}/checkpoint").json()

        def others_cosign() -> None:
            for name, key in (("sheena.players.example", sheena), ("bob.players.example", None)):
                _cosigned_by_another(
                    redis_server.url,
                    table,
                    checkpoint["text"],
                    size=checkpoint["size"],
                    root_hash=checkpoint["root_hash"],
                    name=name,
                    key=key,
                )

        url = f"{live_server.url}/tables/{table}?root={PINNED}&cosigner={quote(sheena_vkey)}"
        seen = _revisit(browser_driver, url, others_cosign)
        assert "your view is unconfirmed" in seen["first"], seen
        assert "cosigned by you and 1 other player(s): sheena.players.example" in seen["second"]
        assert "1 unknown cosigner(s), not counted: bob.players.example" in seen["second"]
        listed = client.get(f"/v1/tables/{table}/cosignatures").json()["cosignatures"]
        assert len(listed) == 3  # this browser's own, posted by the page, Sheena's, Bob's


def test_the_page_raises_the_alarm_on_a_split_view(
    browser_driver: Path, live_server: LiveServer, redis_server: RedisServer, table: str
) -> None:
    """The operator showed another player another tree of the same size, signed with the
    real key; that player cosigned it. Once the cosignature reaches this page (here put
    in Redis as a replica that served the other view would keep it), the page shows the
    alarm with both signed notes."""
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        assert client.post("/v1/tft/contests", json={**CONTEST, "table": table}).is_success
        size = client.get(f"/v1/tables/{table}/checkpoint").json()["size"]
        other = sign_checkpoint(operator, table, size, b"\x0b" * 32, "cd" * 32)

        def split() -> None:
            _cosigned_by_another(
                redis_server.url,
                table,
                other.text,
                size=size,
                root_hash=other.root_hash,
                name="grub.players.example",
            )

        seen = _revisit(browser_driver, f"{live_server.url}/tables/{table}?root={PINNED}", split)
        assert seen["second"].startswith("✗ history check failed: split view: grub"), seen
        assert other.text.split("\n")[2] in seen["second"]
