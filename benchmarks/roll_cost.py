"""The cost of an audited roll, part by part, beside the whole, in one run (issue 20).

    python benchmarks/roll_cost.py [--rolls 3000] [--concurrency 32]

Each part of an audited FBC roll of 5 dice (``{"table", "pool": 10, "risk": 5}``) is
timed in isolation, best of five runs of a tight loop:

- the strict decode of the body (``StrictDecoders``'s typed decoder and key scan);
- the dice (a fresh seed and five HMAC-derived d6s) and the rules (FBC, supplied dice);
- the words, the canonical bytes and the chain hash, the Ed25519 signature, the
  leaf hash, the deflate the store keeps;
- the append's Redis round trip, per round (the real ``AuditStore``, one roll at a time,
  its own CPU subtracted) and per entry (32 tables' rolls in flight, so rounds carry
  many entries);
- the response's encode;
- the framework's own cost for a route of this shape: a bare Litestar app whose handler
  takes the same typed body and returns a fixed response, driven in process over ASGI.

Then the whole: fairroll's own app (``create_app``, real Redis, real key, production
settings but no compute workers) driven in process over ASGI the same way, one request
at a time and ``--concurrency`` at a time. Nothing in the whole is left out of the
parts but the glue between them, so ``whole - sum`` is the gap the budget cannot name;
the socket and HTTP parser are not in either (``benchmarks/harness.py`` has them).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
from litestar import Litestar, Request, post
from redis.asyncio.connection import Connection

from fairroll.api.app import FairrollApp, create_app
from fairroll.api.compute.pool import compute_middleware
from fairroll.api.controllers.systems import mechanic_types
from fairroll.api.direct import DIRECT, DirectRoutes
from fairroll.api.metrics import http_metrics
from fairroll.api.problems import exception_handlers
from fairroll.api.protection import rate_limit, request_timeout
from fairroll.api.settings import Settings
from fairroll.api.strict import StrictDecoders, _may_repeat_a_key, strict_body
from fairroll.audit import AuditStore, connect_redis, merkle
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.entry import Draft, canonical, leaf_hash, receipt_of
from fairroll.audit.redis.append import deflate
from fairroll.audit.redis.connection import PackingConnection
from fairroll.audit.redis.scripts import APPEND
from fairroll.audit.signing import Head, Signer, seal
from fairroll.mechanics import MECHANICS
from fairroll.randomness import SeededDice, SuppliedDice, new_seed
from fairroll.redis_server import RedisServer, free_port

ROLL = MECHANICS["fbc.roll"]
TYPES = mechanic_types(ROLL)
BODY = b'{"table":"bench-1","pool":10,"risk":5}'
GENESIS = Head(0, "0" * 64)


def best(fn: Callable[[], object], loops: int = 2000, runs: int = 5) -> float:
    """Microseconds per call, the best of ``runs`` loops."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        times.append((time.perf_counter() - start) / loops)
    return min(times) * 1e6


def roll_draft(given: Any, table: str) -> Draft:
    """A drawn roll of ``given``, as the roller hands it to the store."""
    source = SeededDice(new_seed())
    outcome = ROLL.resolve(given, source)
    return Draft(
        table=table,
        mechanic=ROLL.name,
        request=given,
        source="drawn",
        seed=source.seed,
        dice=source.dice,
        outcome=outcome,
    )


def parts(signer: Signer) -> dict[str, float]:
    decoder = msgspec.json.Decoder(TYPES.request, strict=True)
    request = decoder.decode(BODY)
    given = ROLL.input_of(request)
    draft = roll_draft(given, "bench-1")
    outcome = draft.outcome
    faces = [die.face for die in draft.dice]
    entry = seal(draft, GENESIS, signer, "2026-12-01T00:00:00.000Z")
    data = canonical(entry)
    leaf = leaf_hash(data)
    words = ROLL.read(request, outcome)
    response = TYPES.response(
        mechanic=ROLL.name,
        source="drawn",
        seed=draft.seed,
        session=None,
        dice=draft.dice,
        receipt=receipt_of(entry),
        outcome=outcome,
        words=words,
    )
    encoder = msgspec.json.Encoder()

    def dice() -> None:
        SeededDice(new_seed()).roll("risk", 6, 5)

    def rules() -> None:
        ROLL.resolve(given, SuppliedDice({"risk": faces}))

    def hash_only() -> None:
        body = msgspec.structs.asdict(entry)
        del body["entry_hash"], body["signature"]
        canonical(body)

    # A round's script call for this entry, as the store sends it (representative keys).
    call = (
        "EVALSHA",
        APPEND.sha,
        6,
        *(f"{{bench-1}}:{k}" for k in "lhbtks"),
        f"0:{'0' * 64}",
        f"1:{entry.entry_hash}",
        0,
        "",
        0,
        1_764_547_200_000,
        0,
        b"\0" * 32,
        "",
        f"1 {'0' * 64}",
        "1-0",
        deflate(data),
        entry.entry_hash[:16],
        0,
        "",
        0,
        "",
        "",
    )
    redis_py, one_pass = Connection(), PackingConnection()
    note = sign_checkpoint(signer, "bench-1", 1_000_001, leaf, entry.entry_hash)
    prove = proof_in_round(leaf)
    proof = prove()
    return {
        "decode (typed, strict) + key scan": best(
            lambda: (decoder.decode(BODY), _may_repeat_a_key(BODY))
        ),
        "dice (new seed, 5 HMAC d6)": best(dice),
        "rules (FBC, 5 dice)": best(rules),
        "words": best(lambda: ROLL.read(request, outcome)),
        "seal: canonical bytes + hash + sign": best(
            lambda: seal(draft, GENESIS, signer, "2026-12-01T00:00:00.000Z")
        ),
        "  of which Ed25519 sign": best(lambda: signer.sign(entry.entry_hash)),
        "  of which canonical bytes": best(hash_only),
        "entry bytes + leaf hash": best(lambda: leaf_hash(canonical(entry))),
        "deflate (level 3)": best(lambda: deflate(data)),
        "receipt (the store's leaf hash reused)": best(lambda: receipt_of(entry, leaf)),
        "round checkpoint: the note signed (once a round)": best(
            lambda: sign_checkpoint(signer, "bench-1", 1_000_001, leaf, entry.entry_hash)
        ),
        "round checkpoint: one entry's inclusion proof": best(prove),
        "receipt with the note and the proof": best(
            lambda: receipt_of(entry, leaf, checkpoint=(note.text, note.size), proof=proof)
        ),
        "response encode": best(lambda: encoder.encode(response)),
        "pack a round's script call: redis-py's packer": best(lambda: redis_py.pack_command(*call)),
        "pack a round's script call: one pass (the store's)": best(
            lambda: one_pass.pack_command(*call)
        ),
    }


def proof_in_round(leaf: bytes) -> Callable[[], list[bytes]]:
    """The inclusion proof of the last of 32 entries a round added to a tree of about a
    million, from the hashes the round holds (as the group commit finds it): set up
    once, the proof alone is what the returned call computes."""
    start, frontier = 1_000_000 - 31, merkle.Frontier.empty()
    known = {}
    # A tree of ``start`` leaves, its frontier only (as a round holds it), then the round.
    for level, index in merkle.frontier_indices(start):
        known[index] = leaf
        frontier.levels.append(level)
        frontier.hashes.append(leaf)
    frontier.size = start
    first = merkle.stored_count(start)
    stored = []
    for _ in range(32):
        frontier, added = frontier.append(leaf)
        stored += added
    known.update(zip(range(first, first + len(stored)), stored, strict=True))
    size = frontier.size
    return lambda: merkle.inclusion_proof(size - 1, size, lambda ix: [known[i] for i in ix])


async def appends(redis_url: str, signer: Signer, rolls: int, concurrency: int) -> dict[str, float]:
    redis = connect_redis(redis_url, 5.0)
    store = AuditStore(redis, signer, allow_unsafe=False)
    given = ROLL.input_of(msgspec.json.decode(BODY, type=TYPES.request))

    # The drafts (dice and rules, counted above) are made before any clock starts.
    count = rolls // concurrency * concurrency
    drafts = [roll_draft(given, f"append-{i % concurrency}") for i in range(concurrency + count)]
    for draft in drafts[:concurrency]:  # learn every table's tip first
        await store.append(draft)
    await redis.config_resetstat()
    start = time.perf_counter()
    for draft in drafts[concurrency:]:
        await store.append(draft)
    one = (time.perf_counter() - start) / count * 1e6
    drafts = [roll_draft(given, f"append-{i % concurrency}") for i in range(count)]

    async def lane(i: int) -> None:
        for draft in drafts[i::concurrency]:
            await store.append(draft)

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(lane(i) for i in range(concurrency)))
    many = (time.perf_counter() - start) / count * 1e6
    many_cpu = (time.process_time() - cpu) / count * 1e6
    scripts = (await redis.info("commandstats")).get("cmdstat_evalsha", {})
    await redis.aclose()
    return {
        "append, one roll a round (store CPU included)": one,
        f"append, per roll, {concurrency} in flight": many,
        "  of which this process's CPU (store, redis-py)": many_cpu,
        "  Redis's own time per append script call": float(scripts.get("usec_per_call", 0)),
    }


def scope_of(method: str, path: str, length: int) -> dict[str, Any]:
    """The ASGI HTTP scope of a request of ``length`` body bytes, as a socket would give."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(length).encode()),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


class Asgi:
    """Drive an ASGI app in process: no socket, no HTTP parser (those are the harness's)."""

    def __init__(self, app: Any, path: str) -> None:
        self.app = app
        self.scope = scope_of("POST", path, len(BODY))

    async def call(self, body: bytes) -> int:
        status = 0

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await self.app(dict(self.scope, state={}), receive, send)
        return status


class Lifespan:
    """The ASGI lifespan protocol, run in this event loop (startup, then shutdown)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()

    async def __aenter__(self) -> Lifespan:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        self.task = asyncio.ensure_future(self.app(scope, self.inbox.get, self.outbox.put))
        await self.inbox.put({"type": "lifespan.startup"})
        said = await self.outbox.get()
        if said["type"] != "lifespan.startup.complete":
            raise RuntimeError(said)
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.inbox.put({"type": "lifespan.shutdown"})
        await self.outbox.get()
        await self.task


async def per_request(
    call: Callable[[bytes], Awaitable[int]], bodies: list[bytes], concurrency: int
) -> tuple[float, float]:
    """Microseconds per request, ``concurrency`` requests in flight: elapsed, and this
    process's CPU (the rest is waiting, for Redis)."""
    queue = list(bodies)

    async def lane() -> None:
        while queue:
            status = await call(queue.pop())
            if status != 200:
                raise RuntimeError(f"status {status}")

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed / len(bodies) * 1e6, cpu / len(bodies) * 1e6


def bare_app(*, middleware: bool = False, direct: bool = False) -> Litestar:
    """A bare Litestar route of the same shape: the typed body in, a fixed answer out;
    with ``middleware``, inside fairroll's own middleware (metrics, rate limit, request
    timeout, compute relay: as ``create_app`` sets them, with no limit and no pool); with
    ``direct`` too, answered as fairroll answers its rolls (``api.direct``: the strict
    decoder, the handler's bytes sent as they are)."""
    answer = b'{"ok":true}'

    @post("/v1/fbc/rolls", status_code=200, opt={DIRECT: direct})
    async def handler(data: TYPES.request, request: Request[Any, Any, Any]) -> bytes:  # type: ignore[name-defined]
        return answer

    handler.fn.__annotations__["data"] = TYPES.request
    stack = [http_metrics, rate_limit, request_timeout(10.0), compute_middleware(lambda _: None)]
    if not direct:
        return Litestar([handler], openapi_config=None, middleware=stack if middleware else [])
    app = FairrollApp(
        [handler],
        openapi_config=None,
        middleware=stack,
        before_request=strict_body,
        exception_handlers=exception_handlers,
    )
    app.headers_for = lambda _: []
    app.state.decoders = StrictDecoders(app)
    app.direct = DirectRoutes(app)
    return app


async def wholes(redis_url: str, rolls: int, concurrency: int) -> dict[str, float]:
    bodies = [f'{{"table":"bench-{i % 1000}","pool":10,"risk":5}}'.encode() for i in range(rolls)]
    results: dict[str, float] = {}
    for label, bare in (
        ("framework: bare Litestar route, typed body", bare_app()),
        ("  the same inside fairroll's middleware", bare_app(middleware=True)),
        ("  the same answered directly (api.direct)", bare_app(middleware=True, direct=True)),
    ):
        async with Lifespan(bare):
            driver = Asgi(bare, "/v1/fbc/rolls")
            await per_request(driver.call, bodies[:200], 1)
            results[label] = (await per_request(driver.call, bodies, 1))[1]
    settings = Settings.from_env(
        {
            "REDIS_URL": redis_url,
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_COMPUTE_WORKERS": "0",
        }
    )
    app = create_app(settings)
    async with Lifespan(app):
        driver = Asgi(app, "/v1/fbc/rolls")
        await per_request(driver.call, bodies[:1000], concurrency)  # every table's tip
        results["whole: fairroll, one at a time"] = (await per_request(driver.call, bodies, 1))[0]
        many, cpu = await per_request(driver.call, bodies, concurrency)
        results[f"whole: fairroll, {concurrency} in flight"] = many
        results["  of which this process's CPU"] = cpu
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    signer = Signer.generate()
    measured = parts(signer)
    with (
        tempfile.TemporaryDirectory() as folder,
        RedisServer(Path(folder) / "redis", port=free_port()) as redis,
    ):
        measured.update(asyncio.run(appends(redis.url, signer, args.rolls, args.concurrency)))
        measured.update(asyncio.run(wholes(redis.url, args.rolls, args.concurrency)))
    report(measured, args.concurrency)


def report(measured: dict[str, float], concurrency: int) -> None:
    cpu = [
        "decode (typed, strict) + key scan",
        "dice (new seed, 5 HMAC d6)",
        "rules (FBC, 5 dice)",
        "words",
        "seal: canonical bytes + hash + sign",
        "entry bytes + leaf hash",
        "deflate (level 3)",
        "receipt (the store's leaf hash reused)",
        "round checkpoint: one entry's inclusion proof",
        "response encode",
        "pack a round's script call: one pass (the store's)",
    ]
    cpu_sum = sum(measured[k] for k in cpu)
    # The store's own parts above: seal, entry bytes and leaf hash, deflate, packing.
    store_parts = sum(measured[k] for k in (*cpu[4:7], cpu[-1]))
    round_trip = measured["append, one roll a round (store CPU included)"] - store_parts
    append_wall = measured[f"append, per roll, {concurrency} in flight"]
    append_cpu = measured["  of which this process's CPU (store, redis-py)"]
    framework = measured["framework: bare Litestar route, typed body"]
    stack = measured["  the same answered directly (api.direct)"]
    print(f"{'part':<52} {'µs':>8}")
    for key, value in measured.items():
        print(f"{key:<52} {value:>8.1f}")

    def row(label: str, value: float, note: str = "") -> None:
        print(f"{label:<60} {value:>8.1f}{note}")

    print("\none at a time: elapsed")
    row("-> Redis round trip, one roll a round (less the store's parts)", round_trip)
    one_sum = cpu_sum + round_trip + stack
    one = measured["whole: fairroll, one at a time"]
    row("sum: CPU parts + round trip + the direct route in the middleware", one_sum)
    row("whole, one at a time", one, f"   gap {one - one_sum:>7.1f}")

    print(f"\n{concurrency} in flight: this process's CPU per roll (the rest is waiting)")
    other_store = append_cpu - store_parts
    row("-> the store's CPU beyond its parts (rounds, redis-py, replies)", other_store)
    many_sum = cpu_sum + other_store + stack
    many = measured[f"whole: fairroll, {concurrency} in flight"]
    many_cpu = measured["  of which this process's CPU"]
    row("sum: CPU parts + the store's other CPU + the direct route", many_sum)
    row("whole, CPU", many_cpu, f"   gap {many_cpu - many_sum:>7.1f}")
    row("-> waiting for Redis: the append (elapsed - CPU)", append_wall - append_cpu)
    row("-> waiting for Redis: the whole (elapsed - CPU)", many - many_cpu)
    print(
        f"\n(CPU parts alone: {cpu_sum:.1f} µs; framework {framework:.1f} µs bare, "
        f"{stack:.1f} µs answered directly inside fairroll's middleware; each part the best "
        "of 5 loops; "
        "CPU is time.process_time, every thread of this process)"
    )


if __name__ == "__main__":
    main()
