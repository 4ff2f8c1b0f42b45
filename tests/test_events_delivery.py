"""How an entry reaches a live subscriber: the feed writes it itself when the subscriber
waits caught up (no wake-up), and a write that blocks (a client reading slowly) delays
no other subscriber and reorders nothing.

The first tests drive ``play.events.Subscription`` with a writer of our own in place of
the ASGI ``send`` (a stand-in: a real one blocks only once a socket's buffers are full,
which a test cannot time); the last goes through a real server, a real Redis and a
client that stops reading."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from fairroll.play.events import Subscription, _Event
from fairroll.redis_server import RedisServer
from support import LiveServer
from test_events import subscribe


def event(seq: int) -> _Event:
    return _Event(seq, b"%d;" % seq)


class Client:
    """A writer that records each write's start and end, and blocks on ``gates[seq]``."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []
        self.gates: dict[int, asyncio.Future[None]] = {}

    async def write(self, frame: bytes) -> None:
        seq = int(frame.rstrip(b";"))
        self.log.append(("start", seq))
        if seq in self.gates:
            await self.gates[seq]
        self.log.append(("end", seq))


async def consume(subscription: Subscription, client: Client, wakes: list[int]) -> None:
    """What ``play.events.stream`` does with queued events: its own writes, in order."""
    while True:
        events = await subscription.next_events()
        wakes.append(len(events))
        for queued in events:
            if queued.seq > subscription.last:
                subscription.last = queued.seq
                await client.write(queued.frame)


def test_a_caught_up_subscriber_is_written_by_the_feed_without_waking() -> None:
    async def scenario() -> tuple[list[tuple[str, int]], list[int]]:
        subscription, client, wakes = Subscription(None, "t", 0), Client(), []  # type: ignore[arg-type]
        subscription.writer = client.write
        task = asyncio.ensure_future(consume(subscription, client, wakes))
        await asyncio.sleep(0)  # the consumer waits
        for seq in (1, 2, 3):
            subscription.deliver(event(seq))
        await asyncio.sleep(0.01)
        task.cancel()
        return client.log, wakes

    log, wakes = asyncio.run(scenario())
    assert log == [("start", 1), ("end", 1), ("start", 2), ("end", 2), ("start", 3), ("end", 3)]
    assert wakes == []  # the subscriber's task never woke


def test_a_blocked_write_finishes_before_the_next_entry_is_written() -> None:
    """Entry 2's write blocks; 3 and 4 arrive meanwhile: they wait for it, then follow in
    order, written by the subscriber's own task."""

    async def scenario() -> tuple[list[tuple[str, int]], list[int]]:
        subscription, client, wakes = Subscription(None, "t", 0), Client(), []  # type: ignore[arg-type]
        subscription.writer = client.write
        client.gates[2] = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(consume(subscription, client, wakes))
        await asyncio.sleep(0)
        subscription.deliver(event(1))
        subscription.deliver(event(2))  # blocks
        subscription.deliver(event(3))  # queued: a write is pending
        await asyncio.sleep(0.01)
        subscription.deliver(event(4))
        await asyncio.sleep(0.01)
        assert client.log[-1] == ("start", 2)  # nothing overtook the blocked write
        client.gates[2].set_result(None)
        await asyncio.sleep(0.01)
        subscription.deliver(event(5))  # caught up again: the feed writes it
        await asyncio.sleep(0.01)
        task.cancel()
        return client.log, wakes

    log, wakes = asyncio.run(scenario())
    ends = [seq for kind, seq in log if kind == "end"]
    assert ends == [1, 2, 3, 4, 5]
    assert log.index(("end", 2)) < log.index(("start", 3))
    assert sum(wakes) == 2  # 3 and 4 went through the queue; 5 did not


def test_a_write_that_fails_ends_the_subscribers_stream() -> None:
    async def scenario() -> BaseException | None:
        subscription = Subscription(None, "t", 0)  # type: ignore[arg-type]

        async def gone(frame: bytes) -> None:
            raise ConnectionResetError("the client left")

        subscription.writer = gone
        waiting = asyncio.ensure_future(subscription.next_events())
        await asyncio.sleep(0)
        subscription.deliver(event(1))
        try:
            await waiting
        except ConnectionResetError as error:
            return error
        return None

    assert isinstance(asyncio.run(scenario()), ConnectionResetError)


@pytest.fixture(scope="module")
def server(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    live = LiveServer(redis_server.url, tmp_path_factory.mktemp("delivery") / "server.log")
    yield live
    live.stop()


def test_a_client_that_stops_reading_slows_no_other_subscriber(
    server: LiveServer, table: str
) -> None:
    """One subscriber stops reading (a small receive buffer, never read); another reads.
    Every roll is answered and reaches the reader in order at once; the stalled one, when
    it reads at last, has every entry in order, once (from its buffers or the log)."""
    rolls = 400
    host, port = server.url.removeprefix("http://").split(":")
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect((host, int(port)))
    stalled.sendall(f"GET /v1/tables/{table}/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    reader, events = subscribe(f"{server.url}/v1/tables/{table}/events", rolls)
    body = {"formula": "100d1000", "table": table}
    slowest = 0.0
    with httpx.Client(timeout=10) as client:
        for _ in range(rolls):
            started = time.monotonic()
            answer = client.post(f"{server.url}/v1/dice/rolls", json=body)
            assert answer.status_code == 200, answer.text
            slowest = max(slowest, time.monotonic() - started)
    reader.join(20)
    ids = [int(e["id"]) for e in events if e.get("event") == "entry"]
    assert ids == list(range(1, rolls + 1))
    assert slowest < 5  # bounded, not timed: a blocked client must not hold a roll
    stalled.settimeout(10)
    got, buffer = [], b""
    while len(got) < rolls:
        chunk = stalled.recv(1 << 16)
        assert chunk, f"the stalled stream ended after {len(got)} entries"
        buffer += chunk
        *frames, buffer = buffer.split(b"\n\n")
        for frame in frames:
            fields = dict(
                line.split(": ", 1) for line in frame.decode().splitlines() if ": " in line
            )
            if fields.get("event") == "entry":
                got.append(int(fields["id"]))
                assert json.loads(fields["data"])["entry"]["seq"] == got[-1]
    stalled.close()
    assert got == list(range(1, rolls + 1))
