"""The audit chain against a real Redis: appends, concurrency, tampering, verification."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio import Redis as AsyncRedis

from fairroll.audit import (
    AuditStore,
    Draft,
    Entry,
    Signer,
    StoreUnavailableError,
    Trust,
    verify_entries,
)
from fairroll.audit.entry import GENESIS_HASH, canonical, chain_hash
from fairroll.mechanics import replay_entry
from fairroll.randomness import SeededDice
from fairroll.redis_server import RedisServer, free_port
from fairroll.rules.tft import Contest, Contestant, resolve_contest

SIGNER = Signer.generate()
KEYS = {SIGNER.key_id: SIGNER.public_key.public_key}


def contest_draft(table: str, seed: str) -> Draft:
    contest = Contest(a=Contestant(attribute=16, talents=2), b=Contestant(attribute=12))
    dice = SeededDice(seed)
    outcome = resolve_contest(contest, dice)
    return Draft(
        table=table,
        mechanic="tft.contest",
        request=contest,
        source="chosen",
        seed=seed,
        dice=dice.dice,
        outcome=outcome,
    )


async def append_many(url: str, table: str, count: int, writer: int) -> list[Entry]:
    redis = AsyncRedis.from_url(url)
    store = AuditStore(redis, SIGNER)
    try:
        return [await store.append(contest_draft(table, f"{writer}-{i}")) for i in range(count)]
    finally:
        await redis.aclose()


async def export(url: str, table: str) -> list[bytes]:
    redis = AsyncRedis.from_url(url)
    try:
        return [raw async for raw in AuditStore(redis, SIGNER).raw_entries(table)]
    finally:
        await redis.aclose()


def lines_of(url: str, table: str, count: int) -> list[bytes]:
    asyncio.run(append_many(url, table, count, 0))
    return asyncio.run(export(url, table))


def test_entries_chain_from_genesis_with_consecutive_seqs(
    redis_server: RedisServer, table: str
) -> None:
    entries = asyncio.run(append_many(redis_server.url, table, 5, 0))
    assert [e.seq for e in entries] == [1, 2, 3, 4, 5]
    assert entries[0].prev_hash == GENESIS_HASH
    assert all(b.prev_hash == a.entry_hash for a, b in itertools.pairwise(entries))
    report = verify_entries(
        asyncio.run(export(redis_server.url, table)), Trust(keys=KEYS), replay=replay_entry
    )
    assert report.ok, report
    assert (report.entries, report.head_hash) == (5, entries[-1].entry_hash)


def test_entry_hash_covers_prev_hash_and_canonical_body(
    redis_server: RedisServer, table: str
) -> None:
    (entry,) = asyncio.run(append_many(redis_server.url, table, 1, 0))
    body = msgspec.to_builtins(entry)
    del body["entry_hash"], body["signature"]
    assert chain_hash(GENESIS_HASH, body) == entry.entry_hash


def test_many_concurrent_writers_never_fork_or_reuse_a_seq(
    redis_server: RedisServer, table: str
) -> None:
    # Eight independent stores (own connection pool, own head cache), as eight replicas.
    async def race() -> list[Entry]:
        batches = await asyncio.gather(
            *(append_many(redis_server.url, table, 25, writer) for writer in range(8))
        )
        return [entry for batch in batches for entry in batch]

    entries = asyncio.run(race())
    assert sorted(e.seq for e in entries) == list(range(1, 201))
    lines = asyncio.run(export(redis_server.url, table))
    assert len(lines) == 200
    assert verify_entries(lines, Trust(keys=KEYS)).ok


def test_writers_in_separate_processes_share_one_chain(
    redis_server: RedisServer, table: str
) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_audit import append_many
        asyncio.run(append_many({redis_server.url!r}, {table!r}, 40, int(sys.argv[1])))
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", script, str(writer)]) for writer in range(4)
    ]
    assert [p.wait(120) for p in processes] == [0, 0, 0, 0]
    lines = asyncio.run(export(redis_server.url, table))
    seqs = [json.loads(line)["seq"] for line in lines]
    assert seqs == list(range(1, 161))
    # Each process signs with its own generated key: check chain and seeds, not signatures.
    assert verify_entries(lines, Trust(keys=None), replay=replay_entry).ok


@pytest.fixture
def chain(redis_server: RedisServer, table: str) -> list[bytes]:
    return lines_of(redis_server.url, table, 6)


def test_edited_byte_is_caught_at_its_seq(chain: list[bytes]) -> None:
    tampered = list(chain)
    tampered[2] = tampered[2].replace(b'"talents":2', b'"talents":3')
    report = verify_entries(tampered, Trust(keys=KEYS))
    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert "entry_hash" in (report.reason or "")


def test_deleted_entry_is_caught_at_its_seq(chain: list[bytes]) -> None:
    report = verify_entries(chain[:2] + chain[3:], Trust(keys=KEYS))
    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert "missing" in (report.reason or "")


def test_swapped_entries_are_caught_at_the_first(chain: list[bytes]) -> None:
    swapped = [*chain[:2], chain[3], chain[2], *chain[4:]]
    report = verify_entries(swapped, Trust(keys=KEYS))
    assert (report.ok, report.first_bad_seq) == (False, 3)


def test_truncated_tail_is_caught_against_the_head(chain: list[bytes]) -> None:
    head = json.loads(chain[-1])
    report = verify_entries(chain[:4], Trust(keys=KEYS, head=(head["seq"], head["entry_hash"])))
    assert (report.ok, report.first_bad_seq) == (False, 5)


def resign(lines: list[bytes], signer: Signer, edit: Any) -> list[bytes]:
    """Rewrite every entry (after applying ``edit``), re-chained and re-signed by ``signer``."""
    out: list[bytes] = []
    prev = GENESIS_HASH
    for raw in lines:
        entry = json.loads(raw)
        edit(entry)
        entry["prev_hash"], entry["key_id"] = prev, signer.key_id
        if entry.get("certificate") is not None:  # the forger's key, self-certified
            entry["certificate"] = msgspec.to_builtins(signer.certificate)
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        entry["entry_hash"] = chain_hash(prev, body)
        entry["signature"] = signer.sign(entry["entry_hash"])
        prev = entry["entry_hash"]
        out.append(json.dumps(entry).encode())
    return out


def test_chain_resigned_by_another_key_is_rejected(chain: list[bytes]) -> None:
    forged = resign(chain, Signer.generate(), lambda entry: None)
    report = verify_entries(forged, Trust(keys=KEYS, root=SIGNER.key_id))
    assert (report.ok, report.first_bad_seq) == (False, 1)
    assert "not certified by the pinned root" in (report.reason or "")


def test_forged_signature_under_the_real_key_id_is_rejected(chain: list[bytes]) -> None:
    forger = Signer.generate()
    forged = [json.loads(line) for line in resign(chain, forger, lambda entry: None)]
    for entry in forged:
        entry["key_id"] = SIGNER.key_id
    report = verify_entries([json.dumps(e) for e in forged], Trust(keys=KEYS))
    assert (report.ok, report.first_bad_seq) == (False, 1)


def test_outcome_that_does_not_follow_from_the_dice_is_caught_by_replay(
    chain: list[bytes],
) -> None:
    def flip_victor(entry: dict[str, Any]) -> None:
        if entry["seq"] == 4:
            entry["outcome"]["victor"] = "b" if entry["outcome"]["victor"] == "a" else "a"

    rewritten = resign(chain, SIGNER, flip_victor)  # even with the real key
    assert verify_entries(rewritten, Trust(keys=KEYS)).ok  # hashes and signatures hold ...
    report = verify_entries(rewritten, Trust(keys=KEYS), replay=replay_entry)
    assert (report.ok, report.first_bad_seq) == (False, 4)  # ... but the rules do not
    assert "outcome" in (report.reason or "")


def test_dice_not_derived_from_the_seed_are_caught(chain: list[bytes]) -> None:
    def reroll(entry: dict[str, Any]) -> None:
        if entry["seq"] == 2:
            entry["dice"][0]["face"] = entry["dice"][0]["face"] % 6 + 1

    report = verify_entries(resign(chain, SIGNER, reroll), Trust(keys=KEYS))
    assert (report.ok, report.first_bad_seq) == (False, 2)
    assert "seed" in (report.reason or "")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_canonical_json_is_what_any_json_library_writes_sorted_and_compact(value: Any) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical(value) == expected.encode()


def test_stdlib_script_checks_one_entry(chain: list[bytes], tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "verify_roll.py"
    entry = tmp_path / "entry.json"
    entry.write_bytes(chain[2])
    good = subprocess.run(
        [sys.executable, str(script), str(entry)], capture_output=True, text=True, check=False
    )
    assert good.returncode == 0, good.stdout
    entry.write_bytes(chain[2].replace(b'"talents":2', b'"talents":1'))
    bad = subprocess.run(
        [sys.executable, str(script), str(entry)], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1
    assert "entry_hash does not match" in bad.stdout


def test_concurrent_appends_in_one_process_are_group_committed_in_order(
    redis_server: RedisServer, table: str
) -> None:
    async def burst() -> list[Entry]:
        redis = AsyncRedis.from_url(redis_server.url)
        store = AuditStore(redis, SIGNER)
        try:
            drafts = [contest_draft(table, f"burst-{i}") for i in range(150)]
            return await asyncio.gather(*(store.append(draft) for draft in drafts))
        finally:
            await redis.aclose()

    entries = asyncio.run(burst())
    # Every caller gets its own entry, each seq once, and callers queued in order keep it.
    assert [entry.seq for entry in entries] == list(range(1, 151))
    assert [entry.seed for entry in entries] == [f"burst-{i}" for i in range(150)]
    lines = asyncio.run(export(redis_server.url, table))
    assert verify_entries(lines, Trust(keys=KEYS), replay=replay_entry).ok


def test_every_queued_caller_hears_that_redis_is_down(tmp_path: Path, table: str) -> None:
    server = RedisServer(tmp_path / "redis", port=free_port()).start()
    url = server.url
    server.stop()

    async def burst() -> list[BaseException | Entry]:
        redis = AsyncRedis.from_url(url, socket_connect_timeout=0.5)
        store = AuditStore(redis, SIGNER)
        try:
            drafts = [contest_draft(table, f"down-{i}") for i in range(10)]
            return await asyncio.gather(
                *(store.append(draft) for draft in drafts), return_exceptions=True
            )
        finally:
            await redis.aclose()

    results = asyncio.run(burst())
    assert all(isinstance(result, StoreUnavailableError) for result in results)


def test_a_version_1_log_still_verifies() -> None:
    """Entries written by format 1 (``seeded``, no certificate field, keys from GET
    /v1/keys, retirement by time) are checked as they were written."""
    contest = Contest(a=Contestant(attribute=12), b=Contestant(attribute=12))
    lines, prev = [], GENESIS_HASH
    for seq, seed in enumerate(("v1-a", "v1-b"), 1):
        dice = SeededDice(seed)
        outcome = resolve_contest(contest, dice)
        body = {
            "v": 1,
            "table": "old",
            "seq": seq,
            "time": "2026-11-01T00:00:00.000Z",
            "mechanic": "tft.contest",
            "request": msgspec.to_builtins(contest),
            "source": "seeded",
            "seed": seed,
            "dice": msgspec.to_builtins(dice.dice),
            "outcome": msgspec.to_builtins(outcome),
            "session": None,
            "prev_hash": prev,
            "key_id": SIGNER.key_id,
        }
        prev = chain_hash(prev, body)
        lines.append(json.dumps({**body, "entry_hash": prev, "signature": SIGNER.sign(prev)}))
    report = verify_entries(lines, Trust(keys=KEYS), replay=replay_entry)
    assert report.ok and report.sources == {"seeded": 2}, report
    assert report.root_hash is not None  # the tree is computed over any log from seq 1
    tampered = json.loads(lines[1])
    tampered["dice"][0]["face"] = tampered["dice"][0]["face"] % 6 + 1
    bad = verify_entries([lines[0], json.dumps(tampered)], Trust(keys=KEYS))
    assert (bad.ok, bad.first_bad_seq) == (False, 2)
