"""A worker full of live event streams still takes other requests.

A live event stream (``GET .../events``) is a request held open. Granian takes at most
its ``backpressure`` requests a worker at once (by default its listen backlog, 1,024, over
the workers), so before ``fairroll serve`` set it a worker holding 1,024 streams accepted
no other connection: a roll beside them waited forever. Now a worker takes every stream
``FAIRROLL_MAX_SUBSCRIBERS`` allows and as many requests again (``cli.serve.run_server``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from fairroll.redis_server import RedisServer
from support import LiveServer

pytestmark = pytest.mark.slow

#: Granian's default bound on a worker's requests in flight, and a few more.
STREAMS = 1024 + 8


async def _open_streams(port: int) -> tuple[list[asyncio.StreamWriter], list[bytes]]:
    """``STREAMS`` raw SSE requests on one table, and the status line each was answered."""
    opened = []
    for _ in range(STREAMS):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"GET /v1/tables/t-streams/events HTTP/1.1\r\nhost: x\r\n"
            b"accept: text/event-stream\r\n\r\n"
        )
        opened.append((reader, writer))
    statuses = []
    for reader, _ in opened:
        try:
            statuses.append(await asyncio.wait_for(reader.readline(), 15))
        except TimeoutError:
            statuses.append(b"no answer")
    return [writer for _, writer in opened], statuses


def test_a_roll_is_answered_beside_more_streams_than_granians_default_bound(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    server = LiveServer(
        redis_server.url,
        tmp_path / "serve.log",
        env={"FAIRROLL_MAX_SUBSCRIBERS": str(STREAMS + 10)},
    )

    async def scenario() -> tuple[list[bytes], int, float]:
        writers, statuses = await _open_streams(server.port)
        try:
            started = time.perf_counter()
            async with httpx.AsyncClient(base_url=server.url, timeout=15) as client:
                rolled = await client.post(
                    "/v1/dice/rolls", json={"formula": "1d20", "table": "t-streams-other"}
                )
            return statuses, rolled.status_code, time.perf_counter() - started
        finally:
            for writer in writers:
                writer.close()

    try:
        statuses, rolled, took = asyncio.run(scenario())
    finally:
        server.stop()
    assert statuses.count(b"HTTP/1.1 200 OK\r\n") == STREAMS, set(statuses)
    assert rolled == 200 and took < 15
