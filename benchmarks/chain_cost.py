"""What a hash-chain seed session costs, beside a drawn seed, in one run.

    python benchmarks/chain_cost.py [--rolls 4000] [--sessions 32] [--length 1000]

- The chain in a process: building one (``HashChain``: every link hashed once, one mark
  kept in ``SPACING``), the memory it keeps (``tracemalloc``), and finding a roll's
  link (``link(j)``, j over the whole chain), best of five.
- The whole roll: fairroll's own app (``create_app``, real Redis, a real key, no compute
  workers) driven in process over ASGI, ``--sessions`` players rolling at once, each its
  FBC rolls in its own chain session on its own table (consecutive nonces, the chain
  renewed when used up), against the same rolls with drawn seeds; alternated twice,
  elapsed and this process's CPU per roll.
- Redis: ``MEMORY USAGE`` of a session's key, after it is opened and after its rolls;
  and the bytes a chain roll's entry carries beyond a drawn one's.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import secrets
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from redis import Redis

from fairroll.api.app import create_app
from fairroll.api.settings import Settings
from fairroll.audit.keyspace import session_key
from fairroll.chain import HashChain
from fairroll.play.sessions import SESSION_TOKEN_HEADER
from fairroll.redis_server import RedisServer, free_port
from roll_cost import Lifespan, scope_of


async def request(
    app: Any, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    """One request to ``app`` over ASGI: its status and JSON answer. ``token``: the seed
    session's, which a roll in it shows (the server requires it by default)."""
    data = b"" if body is None else json.dumps(body).encode()
    scope = scope_of(method, path, len(data))
    if token is not None:
        scope["headers"].append((SESSION_TOKEN_HEADER.lower().encode(), token.encode()))
    sent = False
    status, chunks = 0, []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)
        sent = True
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    text = b"".join(chunks)
    return status, json.loads(text) if text else None


def in_process(length: int) -> dict[str, float]:
    last = secrets.token_hex(32)
    started = time.perf_counter()
    for _ in range(5):
        chain = HashChain(last, length)
    build = (time.perf_counter() - started) / 5
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = HashChain(last, length)
    marks = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del kept
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for j in range(1, length + 1):
            chain.link(j)
        best = min(best, (time.perf_counter() - started) / length)
    return {"build": build * 1e6, "marks": marks, "link": best * 1e6}


async def wholes(url: str, rolls: int, sessions: int, length: int) -> dict[str, Any]:
    settings = Settings.from_env(
        {
            "REDIS_URL": url,
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_COMPUTE_WORKERS": "0",
        }
    )
    app = create_app(settings)
    per = rolls // sessions
    out: dict[str, Any] = {"drawn": [], "chain": []}
    async with Lifespan(app):
        tables = [f"chain-{os.urandom(4).hex()}-{i}" for i in range(sessions)]
        opened, tokens = [], []
        for table in tables:
            status, made = await request(
                app, "POST", f"/v1/tables/{table}/seeds", {"length": length}
            )
            if status != 201:
                raise RuntimeError(f"{status} {made}")
            opened.append({"seed_id": made["seed_id"], "client_seed": secrets.token_hex(16)})
            tokens.append(made["token"])
        nonces = [1] * sessions
        out["opened"] = [(t, o["seed_id"]) for t, o in zip(tables, opened, strict=True)]

        async def lane(i: int, kind: str) -> None:
            for _ in range(per):
                body: dict[str, Any] = {"table": tables[i], "pool": 10, "risk": 5}
                token = None
                if kind == "chain":
                    body["session"] = {**opened[i], "nonce": nonces[i]}
                    token = tokens[i]
                status, said = await request(app, "POST", "/v1/fbc/rolls", body, token)
                if status != 200:
                    raise RuntimeError(f"{status} {said}")
                if kind == "chain":
                    nonces[i] += 1

        for _ in range(2):
            for kind in ("drawn", "chain"):
                started, cpu = time.perf_counter(), time.process_time()
                await asyncio.gather(*(lane(i, kind) for i in range(sessions)))
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
                out[kind].append((elapsed / (per * sessions) * 1e6, cpu / (per * sessions) * 1e6))
        _, drawn = await request(app, "GET", f"/v1/tables/{tables[0]}/entries/2")
        _, chained = await request(app, "GET", f"/v1/tables/{tables[0]}/entries/{per + 3}")
        out["extra_bytes"] = len(json.dumps(chained["session"])) - len(json.dumps(drawn["session"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=4000)
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--length", type=int, default=1000)
    args = parser.parse_args()
    chain = in_process(args.length)
    print(
        f"chain of {args.length} links: built in {chain['build']:,.0f} µs (once a process), "
        f"marks {chain['marks']:,} bytes; a roll's link found in {chain['link']:.1f} µs"
    )
    with (
        tempfile.TemporaryDirectory() as folder,
        RedisServer(Path(folder) / "redis", port=free_port()) as redis,
    ):
        client = Redis.from_url(redis.url)
        table, seed_id = "sizing", None
        measured = asyncio.run(wholes(redis.url, args.rolls, args.sessions, args.length))
        table, seed_id = measured["opened"][0]
        after = client.memory_usage(session_key(table, seed_id))
        fresh_table = f"fresh-{os.urandom(4).hex()}"

        async def one() -> str:
            settings = Settings.from_env(
                {
                    "REDIS_URL": redis.url,
                    "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
                    "FAIRROLL_COMPUTE_WORKERS": "0",
                }
            )
            app = create_app(settings)
            async with Lifespan(app):
                _, made = await request(app, "POST", f"/v1/tables/{fresh_table}/seeds", {})
            return str(made["seed_id"])

        fresh = client.memory_usage(session_key(fresh_table, asyncio.run(one())))
        client.close()
    for kind in ("drawn", "chain"):
        runs = "; ".join(f"{e:,.0f} µs elapsed, {c:,.0f} µs CPU" for e, c in measured[kind])
        print(f"{kind:5} seed, {args.sessions} in flight, per roll: {runs}")
    cpu = [c for _, c in measured["chain"]]
    base = [c for _, c in measured["drawn"]]
    print(f"chain - drawn, CPU per roll (mean of two): {sum(cpu) / 2 - sum(base) / 2:+.0f} µs")
    print(
        f"Redis: a session's key {fresh} bytes opened, {after} bytes after "
        f"{args.rolls // args.sessions} rolls; a chain roll's entry carries "
        f"{measured['extra_bytes']} bytes more session than a drawn one's"
    )


if __name__ == "__main__":
    main()
