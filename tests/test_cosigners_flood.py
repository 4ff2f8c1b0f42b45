"""The store of cosigners cannot be filled by strangers (issue 38, deliverable 6).

The attack, as a stranger makes it on an open table (no write key: anyone may open seed
sessions there, and each session is a credential that may post cosignatures): open
session after session and post a cosignature from a fresh key under each, as fast as
one client can, for a few seconds. Before the store was bounded, each cosigner evicted
from the sessions' pool left its name bound for good, so the table's cosigners hash grew
with every post, and the flood dropped every player's cosignature from the pool (the
stalest go first). Now a name is bound only while its cosigner is kept, and one origin
(a client address) holds a few places of a stranger-fed pool, making room from its own
stalest: the flood churns its own places, the players' cosignatures and a configured
witness's are all kept, and every key of the store stays within its bound.

The origins are told apart as behind a proxy (``FAIRROLL_TRUSTED_PROXY_HOPS=1``,
``X-Forwarded-For``). Real redis-server, real HTTP."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from fairroll.audit.keyspace import cosignatures_key, cosigners_key, pool_key
from fairroll.audit.redis import cosignatures as module
from fairroll.audit.redis.cosignatures import (
    ORIGIN_KEYS,
    POOLS,
    SESSION_KEYS,
    Cosignatures,
    CosignedCheckpoint,
)
from fairroll.redis_server import RedisServer
from support import LiveServer, player_client
from test_cosigners import Cosigner, listed, note_of, session_of

#: How long the flood may run (it stops earlier once it posted ``FLOOD_KEYS``).
FLOOD_SECONDS = 6.0
#: Twice what the sessions' and the anonymous pools hold: enough to churn each through.
FLOOD_KEYS = 2 * (POOLS["session"][1] + POOLS["none"][1])
#: A household or a club behind one address: the eight players of an honest table.
PLAYERS_ORIGIN = "198.51.100.1"
STRANGER_ORIGIN = "203.0.113.66"


@pytest.fixture(scope="module")
def proxied(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A server behind one trusted proxy, so a test can speak from several origins."""
    server = LiveServer(
        redis_server.url,
        tmp_path_factory.mktemp("flood") / "server.log",
        env={"FAIRROLL_TRUSTED_PROXY_HOPS": "1", "FAIRROLL_REDIS_TIMEOUT": "5"},
    )
    yield server
    server.stop()


@pytest.fixture
def http(proxied: LiveServer) -> Iterator[httpx.Client]:
    with player_client(proxied.url, timeout=10) as client:
        yield client


def origin(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def flood(
    client: httpx.Client, table: str, note: str, address: str, headers: dict[str, str] | None = None
) -> tuple[int, float]:
    """A stranger's flood from ``address``: a session, then a cosignature from a fresh key
    under each of its places, again and again; how many it posted and in how long."""
    url = f"/v1/tables/{table}/cosignatures"
    sent = {**origin(address), **(headers or {})}
    started = time.monotonic()
    posted = 0
    while posted < FLOOD_KEYS and time.monotonic() - started < FLOOD_SECONDS:
        session = session_of(client, table, sent)
        for _ in range(SESSION_KEYS):
            stranger = Cosigner(f"flood-{address}-{posted}.example")
            answer = client.post(url, json=stranger.body(note, session=session), headers=sent)
            assert answer.status_code == 201, answer.text
            posted += 1
    return posted, time.monotonic() - started


def keep_witness(redis_url: str, table: str, client: httpx.Client) -> Cosigner:
    """A configured witness's cosignature of the table's checkpoint, kept as the
    submitter (``api.witnesses``) keeps it."""
    witness = Cosigner("witness.example")
    checkpoint = client.get(f"/v1/tables/{table}/checkpoint").json()
    note = witness.body(checkpoint["text"])["note"]

    async def keep() -> str:
        redis = AsyncRedis.from_url(redis_url)
        try:
            kept = await Cosignatures(redis).keep(
                table,
                CosignedCheckpoint(
                    name=witness.name,
                    vkey=witness.vkey,
                    size=checkpoint["size"],
                    root_hash=checkpoint["root_hash"],
                    time=int(time.time()),
                    note=note,
                ),
                "witness",
            )
        finally:
            await redis.aclose()
        return kept.status

    assert asyncio.run(keep()) == "kept"
    return witness


def store_of(redis: Redis, table: str) -> dict[str, Any]:
    """What the table's cosigner store holds, key by key."""
    fields = [f.decode() for f in redis.hkeys(cosigners_key(table))]
    return {
        "cosigners": len(fields),
        "names": sum(f.startswith("n:") for f in fields),
        "cosignatures": redis.hlen(cosignatures_key(table)),
        "pools": {
            credential: redis.zcard(pool_key(table, letter))
            for credential, (letter, _) in POOLS.items()
        },
        "bytes": sum(
            redis.memory_usage(key) or 0
            for key in (
                cosigners_key(table),
                cosignatures_key(table),
                *(pool_key(table, letter) for letter, _ in POOLS.values()),
            )
        ),
    }


def test_a_strangers_session_flood_keeps_the_store_bounded_and_every_player(
    http: httpx.Client,
    table: str,
    redis_server: RedisServer,
    redis_client: Redis,
) -> None:
    """Eight players behind one address each open a session and cosign; a configured
    witness cosigns; then a stranger floods the table from its own address. Afterwards
    the cosigners hash holds a name only for each cosigner kept, every pool is within its
    cap, the eight players and the witness are all kept, and each player cosigns again
    under its name; a stranger cannot take the witness's name. (Before: the hash held a
    name for every key the flood ever posted, and the flood evicted all eight players.)"""
    note = note_of(http, table, origin(PLAYERS_ORIGIN))
    url = f"/v1/tables/{table}/cosignatures"
    players = [Cosigner(f"p{i}.players.example") for i in range(8)]
    sessions = [session_of(http, table, origin(PLAYERS_ORIGIN)) for _ in players]
    for player, session in zip(players, sessions, strict=True):
        kept = http.post(
            url, json=player.body(note, session=session), headers=origin(PLAYERS_ORIGIN)
        )
        assert kept.status_code == 201, kept.text
    witness = keep_witness(redis_server.url, table, http)

    posted, seconds = flood(http, table, note, STRANGER_ORIGIN)
    after = store_of(redis_client, table)
    print(f"\nflood: {posted} in {seconds:.1f} s; the store: {after}")  # noqa: T201 (with -s)

    assert posted > POOLS["session"][1], "the flood did not get through the sessions' pool"
    found = listed(http, table)
    assert {p.vkey for p in players} | {witness.vkey} <= set(found)
    assert after["names"] == after["cosignatures"] == len(found)
    for credential, (_, cap) in POOLS.items():
        assert after["pools"][credential] <= cap, (credential, after)
    assert after["cosigners"] <= 5 * sum(cap for _, cap in POOLS.values()), after
    stranger = session_of(http, table, origin(STRANGER_ORIGIN))
    sybil = Cosigner(witness.name).body(note, session=stranger)
    assert http.post(url, json=sybil, headers=origin(STRANGER_ORIGIN)).status_code == 409
    again = note_of(http, table, origin(PLAYERS_ORIGIN))
    for player, session in zip(players, sessions, strict=True):
        kept = http.post(
            url, json=player.body(again, session=session), headers=origin(PLAYERS_ORIGIN)
        )
        assert kept.status_code == 201, kept.text


def test_a_strangers_name_without_credential_never_locks_out_a_player(
    http: httpx.Client, table: str
) -> None:
    """A stranger posts first under Roth's name with no credential (an open table keeps
    it) and re-posts to keep it fresh; Roth, cosigning with his session, takes the name:
    the stranger's cosignature is dropped, and the stranger cannot take it back.
    (Before: Roth was refused 409 for as long as the stranger kept it.)"""
    note = note_of(http, table, origin(PLAYERS_ORIGIN))
    url = f"/v1/tables/{table}/cosignatures"
    squatter = Cosigner("roth.players.example")
    for _ in range(2):
        squatted = http.post(url, json=squatter.body(note), headers=origin(STRANGER_ORIGIN))
        assert squatted.status_code == 201, squatted.text
    roth = Cosigner("roth.players.example")
    session = session_of(http, table, origin(PLAYERS_ORIGIN))
    kept = http.post(url, json=roth.body(note, session=session), headers=origin(PLAYERS_ORIGIN))
    assert kept.status_code == 201, kept.text
    assert list(listed(http, table)) == [roth.vkey]
    back = http.post(url, json=squatter.body(note), headers=origin(STRANGER_ORIGIN))
    assert back.status_code == 409, back.text
    with_session = http.post(
        url,
        json=squatter.body(note, session=session_of(http, table, origin(STRANGER_ORIGIN))),
        headers=origin(STRANGER_ORIGIN),
    )
    assert with_session.status_code == 409, with_session.text
    assert list(listed(http, table)) == [roth.vkey]


def test_a_strangers_session_holds_a_name_only_while_it_is_open(
    http: httpx.Client, table: str
) -> None:
    """On an open table a stranger opens a session and binds Mara's name: while that
    session is open, Mara's post under her name is refused 409 (a name keeps its first
    key); once the stranger's session is revealed, Mara, cosigning with her own session,
    takes the name and the stranger's cosignature is dropped. (Before: the stranger held
    the name for good on a quiet table, its cosigner never dropped.)"""
    note = note_of(http, table, origin(PLAYERS_ORIGIN))
    url = f"/v1/tables/{table}/cosignatures"
    squatter = Cosigner("mara.players.example")
    theirs = session_of(http, table, origin(STRANGER_ORIGIN))
    bound = http.post(
        url, json=squatter.body(note, session=theirs), headers=origin(STRANGER_ORIGIN)
    )
    assert bound.status_code == 201, bound.text
    mara = Cosigner("mara.players.example")
    mine = session_of(http, table, origin(PLAYERS_ORIGIN))
    refused = http.post(url, json=mara.body(note, session=mine), headers=origin(PLAYERS_ORIGIN))
    assert refused.status_code == 409, refused.text
    revealed = http.post(
        f"/v1/tables/{table}/seeds/{theirs['seed_id']}/reveal", headers=origin(STRANGER_ORIGIN)
    )
    assert revealed.status_code == 200, revealed.text
    taken = http.post(url, json=mara.body(note, session=mine), headers=origin(PLAYERS_ORIGIN))
    assert taken.status_code == 201, taken.text
    assert list(listed(http, table)) == [mara.vkey]
    relayed = http.post(url, json=squatter.body(note), headers=origin(STRANGER_ORIGIN))
    assert relayed.status_code == 409, relayed.text


def test_a_names_binding_goes_with_its_cosigner(
    http: httpx.Client, table: str, redis_client: Redis
) -> None:
    """A stranger binds Kira's name with a session; strangers from enough addresses then
    churn the sessions' pool through, and the named cosigner, the stalest, is dropped
    with its binding: Kira takes her name (a label, not trust), and no binding of a
    dropped cosigner is left in the hash. (Before: the name stayed bound for good to a
    key the table no longer kept, and Kira was refused 409.)"""
    note = note_of(http, table, origin(PLAYERS_ORIGIN))
    url = f"/v1/tables/{table}/cosignatures"
    ghost = Cosigner("kira.players.example")
    session = session_of(http, table, origin(STRANGER_ORIGIN))
    bound = http.post(url, json=ghost.body(note, session=session), headers=origin(STRANGER_ORIGIN))
    assert bound.status_code == 201, bound.text
    addresses = POOLS["session"][1] // ORIGIN_KEYS["session"] + 1
    for host in range(1, addresses + 1):
        churner = origin(f"192.0.2.{host}")
        for _ in range(ORIGIN_KEYS["session"] // SESSION_KEYS):
            session = session_of(http, table, churner)
            for place in range(SESSION_KEYS):
                fresh = Cosigner(f"churn-{host}-{session['seed_id']}-{place}.example")
                posted = http.post(url, json=fresh.body(note, session=session), headers=churner)
                assert posted.status_code == 201, posted.text
    assert ghost.vkey not in listed(http, table)
    kira = Cosigner("kira.players.example")
    mine = session_of(http, table, origin(PLAYERS_ORIGIN))
    taken = http.post(url, json=kira.body(note, session=mine), headers=origin(PLAYERS_ORIGIN))
    assert taken.status_code == 201, taken.text
    after = store_of(redis_client, table)
    assert after["names"] == after["cosignatures"] == len(listed(http, table))


def test_every_field_of_the_store_belongs_to_a_kept_cosigner(
    redis_server: RedisServer, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random posts (every credential, a few names, keys, sessions and origins) through
    small pools, so every path of the script runs: taking a name, making room in a pool
    and in an origin's places, a credential growing stronger. After each, every name,
    credential, origin and count in the cosigners hash is a kept cosigner's or counts
    kept cosigners exactly, each kept cosigner sits in the one pool of its credential
    under its own name, and no pool is past its cap."""
    monkeypatch.setattr(
        module,
        "POOLS",
        {"witness": ("x", 2), "write_key": ("w", 3), "session": ("s", 4), "none": ("a", 3)},
    )
    monkeypatch.setattr(module, "SESSION_KEYS", 2)
    monkeypatch.setattr(module, "ORIGIN_KEYS", {"session": 3, "none": 1})
    chooser = random.Random(38)
    names = [f"n{i}.example" for i in range(10)]
    keys = [(chooser.choice(names), f"k{i}") for i in range(14)]
    credentials: list[tuple[module.Credential, str | None]] = [
        ("witness", None),
        ("write_key", None),
        *(("session", f"s{i:016d}") for i in range(2)),
        ("none", None),
    ]

    statuses: Counter[str] = Counter()

    async def run() -> None:
        redis = AsyncRedis.from_url(redis_server.url)
        store = module.Cosignatures(redis)
        try:
            for _ in range(400):
                size = chooser.randint(1, 40)
                name, key = chooser.choice(keys)
                credential, seed_id = chooser.choice(credentials)
                vkey = f"{name}+{key}"
                cosigned = CosignedCheckpoint(
                    name=name, vkey=vkey, size=size, root_hash="", time=size, note=""
                )
                address = None if credential == "witness" else chooser.choice("abc")
                kept = await store.keep(table, cosigned, credential, seed_id, address)
                statuses[kept.status] += 1
                check(
                    await redis.hgetall(cosigners_key(table)),
                    await redis.hgetall(cosignatures_key(table)),
                    {
                        letter: {
                            m.decode() for m in await redis.zrange(pool_key(table, letter), 0, -1)
                        }
                        for letter, _ in module.POOLS.values()
                    },
                )
        finally:
            await redis.aclose()

    def check(
        hashed: dict[bytes, bytes], kept_raw: dict[bytes, bytes], pools: dict[str, set[str]]
    ) -> None:
        fields = {k.decode(): v.decode() for k, v in hashed.items()}
        kept = {k.decode(): msgspec.json.decode(v)["name"] for k, v in kept_raw.items()}
        credential_of = {f[2:]: v for f, v in fields.items() if f.startswith("c:")}
        origin_of = {f[2:]: v for f, v in fields.items() if f.startswith("o:")}
        assert {f[2:]: v for f, v in fields.items() if f.startswith("n:")} == {
            name: vkey for vkey, name in kept.items()
        }
        assert set(credential_of) == set(kept)
        assert set(origin_of) <= set(kept)
        counts = {f: int(v) for f, v in fields.items() if f[0] in "#@"}
        want = Counter(f"#{c}" for c in credential_of.values()) + Counter(
            f"@{credential_of[v][0]}:{o}" for v, o in origin_of.items()
        )
        assert counts == dict(want)
        for vkey, credential in credential_of.items():
            assert [letter for letter, members in pools.items() if vkey in members] == [
                credential[0]
            ]
        for credential, (letter, cap) in module.POOLS.items():
            assert len(pools[letter]) <= cap, credential
        assert len(fields) <= 5 * len(kept)

    asyncio.run(run())
    assert set(statuses) == {"kept", "older", "name", "session", "full"}, statuses
