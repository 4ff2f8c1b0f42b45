"""The in-page verifier (``/static/verify.js``) checks real exports with WebCrypto alone.

It runs here under Node (>= 20: WebCrypto with Ed25519, like the browsers fairroll's
table page targets) on an export from a live server: hashes recomputed from canonical
JSON written in JavaScript (names with non-ASCII, control characters, U+2028 and an
emoji included), links, Ed25519 signatures against GET /v1/keys, and seeded dice
re-derived with HMAC. Tampering is flagged at the entry it touches.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis import Redis

from fairroll.redis_server import RedisServer
from support import TEST_SIGNING_KEY, LiveServer, run_node

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "service" / "fairroll" / "page" / "static" / "verify.js"
SCRIPT = ROOT / "tests" / "js" / "verify_export.mjs"
VECTOR_ROW = re.compile(
    r"^\| `(?P<seed>[^`]+)` \| (?P<sides>\d+) \| (?P<count>\d+) \| (?P<faces>[\d ]+) \|$"
)
ODD_NAME = 'Zoë "the\\quick" \t\u2028 \u00e9\u0301 \U0001f3b2 \x01'


def run_verifier(tmp_path: Path, keys: Any, lines: list[bytes], vectors: Any = ()) -> Any:
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    (tmp_path / "export.ndjson").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "vectors.json").write_text(json.dumps(list(vectors)))
    return run_node(
        SCRIPT,
        MODULE,
        tmp_path / "keys.json",
        tmp_path / "export.ndjson",
        tmp_path / "vectors.json",
    )


@pytest.fixture
def export(client: httpx.Client, table: str) -> tuple[Any, list[bytes]]:
    contest = {"a": {"name": ODD_NAME, "attribute": 16, "talents": 2}, "b": {"attribute": 12}}
    rolls = [
        ("/v1/tft/contests", {**contest, "seed": "page/1"}),
        ("/v1/fbc/rolls", {"pool": 10, "risk": 5, "slower": 1, "seed": "page/2"}),
        (
            "/v1/tribute/tests",
            {"reality": "d12", "rank": 0, "focus": 6, "burden": 6, "difficulty": 0},
        ),
        (
            "/v1/stat-skill/checks",
            {"stat": 4, "skill": 5, "tn": 10, "dice": {"stat": [6], "skill": [7]}},
        ),
        (
            "/v1/fast-battle/initiatives",
            {
                "fighters": [
                    {"name": "A", "st": 1, "qk": 2, "in": 1, "ma": 1, "mr": 1, "max_hp": 5},
                    {"name": "B", "st": 1, "qk": 2, "in": 1, "ma": 1, "mr": 1, "max_hp": 5},
                ]
            },
        ),
    ]
    for path, body in rolls:
        response = client.post(path, json={**body, "table": table})
        assert response.status_code == 200, response.text
    lines = client.get(f"/v1/tables/{table}/export").content.split(b"\n")[:-1]
    return client.get("/v1/keys").json(), lines


def test_a_genuine_export_verifies_entry_by_entry(
    export: tuple[Any, list[bytes]], tmp_path: Path
) -> None:
    keys, lines = export
    vectors = [
        {"seed": m["seed"], "sides": int(m["sides"]), "count": int(m["count"])}
        for m in (
            VECTOR_ROW.match(line)
            for line in (ROOT / "docs" / "randomness.md").read_text().splitlines()
        )
        if m
    ]
    expected = [
        [int(f) for f in m["faces"].split()]
        for m in (
            VECTOR_ROW.match(line)
            for line in (ROOT / "docs" / "randomness.md").read_text().splitlines()
        )
        if m
    ]
    out = run_verifier(tmp_path, keys, lines, vectors)
    results = out["results"]
    assert [r["seq"] for r in results] == [1, 2, 3, 4, 5]
    assert all(r["ok"] for r in results), results
    assert all(r["checks"]["hash"] and r["checks"]["signature"] for r in results)
    dice = [r["checks"]["dice"] for r in results]
    assert dice == [
        "re-derived",
        "re-derived",
        "re-derived",
        "supplied (rolled elsewhere)",
        "re-derived",
    ]
    assert vectors and out["vectors"] == expected  # the published test vectors, in JS


@pytest.mark.parametrize(
    ("seq", "tamper", "problem"),
    [
        (2, lambda e: e["outcome"].update(successes=e["outcome"]["successes"] + 1), "entry_hash"),
        (1, lambda e: e["request"]["a"].update(name="Roth"), "entry_hash"),
        (3, lambda e: e.update(signature=e["signature"][:-4] + "AAA="), "signature"),
    ],
)
def test_tampering_is_flagged_at_the_entry(
    export: tuple[Any, list[bytes]], tmp_path: Path, seq: int, tamper: Any, problem: str
) -> None:
    keys, lines = export
    entry = json.loads(lines[seq - 1])
    tamper(entry)
    lines[seq - 1] = json.dumps(entry, ensure_ascii=False).encode()
    results = run_verifier(tmp_path, keys, lines)["results"]
    assert [r["seq"] for r in results if not r["ok"]] == [seq]
    assert problem in " ".join(results[seq - 1]["problems"])


def test_rehashed_dice_are_caught_by_the_seed_and_the_signature(
    export: tuple[Any, list[bytes]], tmp_path: Path
) -> None:
    keys, lines = export
    entry = json.loads(lines[0])
    entry["dice"][0]["face"] = 1 if entry["dice"][0]["face"] != 1 else 2
    lines[0] = json.dumps(entry).encode()
    results = run_verifier(tmp_path, keys, lines)["results"]
    assert not results[0]["ok"]
    assert any("the seed gives" in p for p in results[0]["problems"])


def test_a_deleted_entry_breaks_the_link_of_the_next(
    export: tuple[Any, list[bytes]], tmp_path: Path
) -> None:
    keys, lines = export
    del lines[2]
    results = run_verifier(tmp_path, keys, lines)["results"]
    assert [r["seq"] for r in results if not r["ok"]] == [4]
    assert "prev_hash" in results[2]["problems"][0]


def test_the_server_serves_the_verifier(client: httpx.Client) -> None:
    response = client.get("/static/verify.js")
    assert response.status_code == 200
    assert "javascript" in response.headers["content-type"]
    assert response.content == MODULE.read_bytes()


def test_a_gap_is_named_and_only_a_declared_epoch_may_follow_one(
    redis_server: RedisServer, redis_client: Redis, tmp_path: Path, table: str
) -> None:
    """Seqs 4 and 5 are lost and an operator opens an epoch at 6 (``fairroll open-epoch``):
    the in-page verifier accepts that declared gap; an undeclared one is named."""
    server = LiveServer(redis_server.url, tmp_path / "first.log")
    try:
        with httpx.Client(base_url=server.url) as client:
            receipts = [
                client.post("/v1/tft/contests", json={**BODY, "table": table}).json()["receipt"]
                for _ in range(5)
            ]
            keys = client.get("/v1/keys").json()
    finally:
        server.stop()
    redis_client.xdel(f"fairroll:{{{table}}}:log", "4-0", "5-0")
    redis_client.set(f"fairroll:{{{table}}}:head", f"3:{receipts[2]['entry_hash']}")
    env = {**os.environ, "REDIS_URL": redis_server.url, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY}
    command = ["open-epoch", table, "--resume-after", "5", "--reason", "lost disk"]
    opened = subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *command],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert opened.returncode == 0, opened.stderr
    fresh = LiveServer(redis_server.url, tmp_path / "fresh.log")
    try:
        with httpx.Client(base_url=fresh.url) as client:
            lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    finally:
        fresh.stop()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2, 3, 6]
    seen = run_verifier(tmp_path, keys, lines)
    assert [r["ok"] for r in seen["results"]] == [True] * 4, seen["results"]
    assert "declared lost" in seen["results"][3]["checks"]["dice"]
    undeclared = run_verifier(tmp_path, keys, [lines[0], lines[2]])
    assert "seq 2 is missing: found seq 3" in undeclared["results"][1]["problems"]
