"""The differential fuzzer's base logs: real logs from live servers on a Redis of their
own, holding every statement kind the log has (tests/test_differential_fuzz.py).

A deployment of two keys: the root (``TEST_SIGNING_KEY``) signs first, then a key it
certified (``ROTATED``) takes over, and ``fairroll retire-key`` retires the root key in
every table. Two tables:

- ``main``, made with ``POST /v1/tables`` and a policy (its first entry is a
  ``table.policy``): drawn and supplied rolls; a commit-reveal session whose reveal is
  signed by the new key; a hash-chain session of length 2 renewed on both sides of the
  rotation (a new client seed per chain); the rotated key's first entry (its
  certificate), the ``key.retire``; then two drawn rolls lost and an ``audit.epoch``
  (``fairroll open-epoch``) declaring them, and rolls after it. Three sealed rolls in
  the chain (docs/audit.md, "Sealed rolls"): one sealed by the root key and revealed
  after the rotation, the retirement and the epoch; one sealed and revealed at once by
  the new key; one never revealed.
- ``open``, an open table: drawn, chosen and supplied rolls, a commit-reveal session, a
  sealed roll in a hash-chain session of its own, rolls after the rotation and its
  ``key.retire``, then the sealed roll's reveal; exported whole, then archived
  (``fairroll archive``) through the sealed roll: the rest of it behind its signed base
  is a base log of its own, whose reveal names a roll before the part read.

Besides the logs: receipts of rolls and reveals on both sides of the rotation and of the
epoch, and a checkpoint note cosigned by a player (C2SP tlog-cosignature) and kept by
the server. The corpus is built once per module (three server starts are most of the
fuzzer's setup) and each mutation works on a deep copy. The keys and blinds are fixed
test values, so a saved finding replays against the same root.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from redis import Redis

from fairroll.audit import Signer, load_signer
from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from fairroll.audit.signing import certify
from fairroll.redis_server import RedisServer, free_port
from support import TEST_ROOT, TEST_SIGNING_KEY, LiveServer, SessionTokens, player_client

__all__ = ["COSIGNER", "ROOT_SIGNER", "ROTATED", "Corpus", "build_corpus"]

Entry = dict[str, Any]
BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}
SUPPLIED = {"a": [6, 5, 5, 4, 2, 2, 1], "b": [5, 4, 4, 4]}

ROOT_SIGNER: Signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
#: The key the root certifies and rotates to (a fixed test key, so a finding replays).
ROTATED_KEY = base64.b64encode(b"fairroll fuzz rotated key 000001").decode()
ROTATED: Signer = load_signer(key=ROTATED_KEY, key_file=None, dev_dir=None)
#: The player who cosigns the main table's checkpoint.
COSIGNER = (
    "alice.players.example",
    Ed25519PrivateKey.from_private_bytes(b"fairroll fuzz cosigner key 00001"),
)


@dataclass
class Corpus:
    """What the live servers wrote: logs (each with its archive base, if any), receipts
    of entries, a cosigned note, and the keys ``GET /v1/keys`` publishes."""

    keys: dict[str, Any]
    #: the deployment's last server, up while the corpus is in use
    url: str
    root: str = TEST_ROOT
    #: name -> (the log's entries, the archive base checkpoint's JSON or None)
    logs: dict[str, tuple[list[Entry], dict[str, Any] | None]] = field(default_factory=dict)
    #: (entry, receipt) pairs
    receipts: list[tuple[Entry, dict[str, Any]]] = field(default_factory=list)
    #: (cosigned note text, cosigner's vkey)
    cosigned: list[tuple[str, str]] = field(default_factory=list)
    #: seqs of the boundaries in ``main``: rotation (the new key's first entry),
    #: retirement, epoch
    boundaries: dict[str, int] = field(default_factory=dict)
    #: seconds the deployment took to write it all (the fuzzer prints them: its setup)
    seconds: float = 0.0


def signers() -> dict[str, Signer]:
    """Every key the fuzzer holds, by key id: mutations re-sign with the entry's key."""
    return {s.key_id: s for s in (ROOT_SIGNER, ROTATED)}


@contextmanager
def build_corpus(folder: Path) -> Iterator[Corpus]:
    """Run the deployment above on a Redis of its own (``retire-key`` writes into every
    table of a Redis, so a shared one would retire the other tests' key); its last server
    stays up until the context ends (``Corpus.url``: it answers ``POST /v1/verify`` as
    the deployment that wrote the logs, holding both keys)."""
    certificate = msgspec.json.encode(certify(ROOT_SIGNER, ROTATED.public_key.public_key)).decode()
    new_env = {
        "FAIRROLL_SIGNING_KEY": ROTATED_KEY,
        "FAIRROLL_KEY_CERTIFICATE": certificate,
    }
    with RedisServer(folder / "redis", port=free_port()) as redis:
        corpus, server = _campaign(redis.url, folder, new_env)
        try:
            yield corpus
        finally:
            server.stop()


def _campaign(redis_url: str, folder: Path, new_env: dict[str, str]) -> tuple[Corpus, LiveServer]:
    started = time.monotonic()
    receipts: list[tuple[Entry, dict[str, Any]]] = []
    open_table = "fuzz-open"
    tokens = SessionTokens()  # the players' session tokens, across the three servers
    openings: dict[str, dict[str, Any]] = {}  # a sealed roll's opening, kept by its roller
    first = LiveServer(redis_url, folder / "root.log", env={"FAIRROLL_REDIS_TIMEOUT": "5"})
    try:
        with player_client(first.url, tokens, timeout=30) as http:
            made = _ok(http.post("/v1/tables", json={"policy": {"chosen_seeds": False}}))
            main, auth = made["table"], {"Authorization": f"Bearer {made['write_key']}"}
            roll = _roller(http, main, auth, receipts)
            roll()
            roll(dice=SUPPLIED)
            seeds = f"/v1/tables/{main}/seeds"
            commit = _ok(http.post(seeds, json={"kind": "commit"}, headers=auth))["seed_id"]
            for player in ("p1", "p2"):
                roll(session={"seed_id": commit, "client_seed": player})
            made = http.post(seeds, json={"kind": "chain", "length": 2}, headers=auth)
            chain = _ok(made)["seed_id"]
            device = _devices(chain)  # a new client seed per chain: nonces 2n-1, 2n
            roll(session=device(1))
            openings["revealed late"] = roll(session=device(2), sealed=_sealed("gm", 2))
            roll(session=device(3))  # renews the chain
            other = _roller(http, open_table, {}, receipts)
            other()
            other(seed="ground")
            other(dice=SUPPLIED)
            made = http.post(f"/v1/tables/{open_table}/seeds", json={"kind": "commit"})
            opened = _ok(made)["seed_id"]
            other(session={"seed_id": opened, "client_seed": "q1"})
            made = http.post(f"/v1/tables/{open_table}/seeds", json={"kind": "chain", "length": 4})
            ref = {"seed_id": _ok(made)["seed_id"], "client_seed": "r1"}
            archived = other(session=ref, sealed=_sealed("blind", 9))
            other(session={"seed_id": opened, "client_seed": "q2"})
    finally:
        first.stop()
    env = {"FAIRROLL_REDIS_TIMEOUT": "5", **new_env}
    second = LiveServer(redis_url, folder / "rotated.log", env=env)
    try:
        with player_client(second.url, tokens, timeout=30) as http:
            roll = _roller(http, main, auth, receipts)
            reveal = _revealer(http, main, auth, receipts)
            roll()  # the new key's first entry: its certificate
            reveal(roll(session=device(4), sealed=_sealed("blind", 4)))
            _cli(redis_url, new_env, "retire-key", ROOT_SIGNER.key_id)
            roll(session=device(5))  # renewed
            _ok(http.post(f"/v1/tables/{main}/seeds/{commit}/reveal", headers=auth))
            other = _roller(http, open_table, {}, receipts)
            other()
            other(session={"seed_id": opened, "client_seed": "q3"})
            _ok(http.post(f"/v1/tables/{open_table}/seeds/{opened}/reveal"))
            # Revealed behind the archive base: the base log counts it unchecked.
            _revealer(http, open_table, {}, receipts)(archived)
            other(seed="after")
            roll(session=device(6), sealed=_sealed("self", 6))  # never revealed
            before = roll()["receipt"]
            lost = [roll()["receipt"]["seq"], roll()["receipt"]["seq"]]
    finally:
        second.stop()
    # The last two rolls are lost for good: the operator opens an epoch after them.
    with Redis.from_url(redis_url) as redis:
        redis.xdel(f"fairroll:{{{main}}}:log", *(f"{seq}-0" for seq in lost))
        redis.set(f"fairroll:{{{main}}}:head", f"{before['seq']}:{before['entry_hash']}")
    receipts[:] = [
        (e, r) for e, r in receipts if (e["table"], e["seq"]) not in {(main, seq) for seq in lost}
    ]
    _cli(
        redis_url, new_env, "open-epoch", main, "--resume-after", lost[-1], "--reason", "lost disk"
    )
    third = LiveServer(redis_url, folder / "after.log", env=env)
    try:
        with player_client(third.url, tokens, timeout=30) as http:
            roll = _roller(http, main, auth, receipts)
            roll()
            # Sealed by the retired root key, revealed across the rotation and the epoch.
            _revealer(http, main, auth, receipts)(openings["revealed late"])
            roll(session=device(7))
            corpus = Corpus(keys=_ok(http.get("/v1/keys")), url=third.url)
            corpus.logs["main"] = (_export(http, main), None)
            corpus.cosigned.append(_cosigned(http, main, auth))
            corpus.logs["open"] = (_export(http, open_table), None)
            out = folder / "archived.ndjson"
            through = archived["receipt"]["seq"]
            _cli(redis_url, new_env, "archive", open_table, "--through", through, "--out", out)
            base = _ok(http.get(f"/v1/tables/{open_table}/base"))
            corpus.logs["open-after-archive"] = (_export(http, open_table), base)
    except BaseException:
        third.stop()
        raise
    corpus.receipts = receipts
    main_log = corpus.logs["main"][0]
    corpus.boundaries = {
        "rotation": next(e["seq"] for e in main_log if e["key_id"] == ROTATED.key_id),
        "retirement": next(e["seq"] for e in main_log if e["mechanic"] == "key.retire"),
        "epoch": next(e["seq"] for e in main_log if e["mechanic"] == "audit.epoch"),
    }
    corpus.seconds = time.monotonic() - started
    return corpus, third


def _devices(chain: str) -> Any:
    """The session reference of the chain roll at ``nonce``: one client seed per chain of
    length 2 (a client seed reused across a renewal is a not-fair roll, not the point)."""

    def device(nonce: int) -> dict[str, str]:
        return {"seed_id": chain, "client_seed": f"device-{(nonce + 1) // 2}"}

    return device


def _sealed(audience: str, number: int) -> dict[str, str]:
    """A sealed roll's ``sealed`` field: the blind a fixed test value (a finding replays)."""
    return {"audience": audience, "blind": hashlib.sha256(b"fuzz blind %d" % number).hexdigest()}


def _revealer(
    http: httpx.Client,
    table: str,
    headers: dict[str, str],
    receipts: list[tuple[Entry, dict[str, Any]]],
) -> Any:
    def reveal(answer: dict[str, Any]) -> None:
        """Publish a sealed roll's opening (``answer``: the sealed roll's answer)."""
        url = f"/v1/tables/{table}/sealed/{answer['receipt']['seq']}/reveal"
        revealed = _ok(http.post(url, json={"opening": answer["opening"]}, headers=headers))
        seq = revealed["receipt"]["seq"]
        receipts.append((_ok(http.get(f"/v1/tables/{table}/entries/{seq}")), revealed["receipt"]))

    return reveal


def _export(http: httpx.Client, table: str) -> list[Entry]:
    lines = http.get(f"/v1/tables/{table}/export").content.splitlines()
    return [json.loads(line) for line in lines]


def _cosigned(http: httpx.Client, table: str, auth: dict[str, str]) -> tuple[str, str]:
    """The table's checkpoint, cosigned by a player and kept by the server: the note
    ``GET .../checkpoint`` serves with the player's line."""
    note: str = _ok(http.get(f"/v1/tables/{table}/checkpoint"))["text"]
    name, key = COSIGNER
    vkey = verifier_key(name, raw_public_key(key))
    line = cosign(note, name, key, int(time.time()))
    posted = {"vkey": vkey, "note": f"{note}{line}\n"}
    _ok(http.post(f"/v1/tables/{table}/cosignatures", json=posted, headers=auth))
    served: str = _ok(http.get(f"/v1/tables/{table}/checkpoint"))["text"]
    assert line in served, served
    return served, vkey


def _roller(
    http: httpx.Client,
    table: str,
    headers: dict[str, str],
    receipts: list[tuple[Entry, dict[str, Any]]],
) -> Any:
    def roll(**extra: Any) -> dict[str, Any]:
        answer: dict[str, Any] = _ok(
            http.post("/v1/tft/contests", json={**BODY, "table": table, **extra}, headers=headers)
        )
        seq = answer["receipt"]["seq"]
        entry = _ok(http.get(f"/v1/tables/{table}/entries/{seq}"))
        receipts.append((entry, answer["receipt"]))
        return answer

    return roll


def _ok(response: httpx.Response) -> Any:
    assert response.is_success, (response.request.url, response.status_code, response.text)
    return response.json()


def _cli(redis_url: str, env: dict[str, str], *args: object) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *map(str, args)],
        env={**os.environ, "REDIS_URL": redis_url, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout
