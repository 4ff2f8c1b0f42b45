"""Live table events: every entry of a table as it is appended, by any replica.

``GET /v1/tables/{table}/events`` is a Server-Sent Events stream: one ``entry`` event
per audit entry, ``id:`` its seq, ``data:`` ``{"entry": <the signed entry>, "words":
<its words>}``; a ``checkpoint`` event (the table's signed checkpoint) after each
burst when asked (``?checkpoint=true``); a ``cosignature`` event (``data:`` the
cosignature as ``GET .../cosignatures`` lists it) as each is kept, by any replica,
when asked (``?cosignatures=true``: live only, no ``id:``); a comment as a heartbeat every
``HEARTBEAT_SECONDS``. ``Last-Event-ID`` (an ``EventSource`` sends it when it
reconnects) or ``?after=`` resumes after that seq without a gap.

The table's log is a Redis stream (``keyspace.log_key``), and so are its cosignatures
as they are kept (``keyspace.cosigned_key``), so a process follows both with one
blocking ``XREAD`` per table, whoever appends (``audit.redis.feeds``): one :class:`_Feed` per table
with subscribers here, fanning out to them, and gone with the last of them. Each
subscriber remembers the last seq it sent. An entry that arrives past a gap (the
feed started after the subscriber caught up, or the subscriber fell behind and its
queue overflowed) is preceded by the missing ones, read from the log: a subscriber
sees every entry, in order, once. A feed keeps its table's latest events (``HISTORY``),
so the subscribers catching up read them from memory, not each from the log.
Subscribers per process are bounded (``FAIRROLL_MAX_SUBSCRIBERS``); beyond it the
answer is 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import types
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Generator
from typing import Any, Literal, NamedTuple

import msgspec
from redis.exceptions import RedisError

from fairroll.audit import AuditStore
from fairroll.audit.entry import Entry
from fairroll.audit.redis.feeds import TableFollower
from fairroll.mechanics import words_or_none

__all__ = [
    "HEARTBEAT_FRAME",
    "HEARTBEAT_SECONDS",
    "Message",
    "Subscription",
    "TableEvents",
    "TooManySubscribersError",
    "stream",
]

HEARTBEAT_SECONDS = 15.0
#: How long one XREAD blocks before it is issued again (a feed with no subscriber left
#: ends within this). The feeds' Redis client waits this much longer than the others.
BLOCK_MS = 5_000
#: Subscribers reading the log at once (a catch-up, a gap): the rest wait their turn, so
#: a thousand streams opening together do not take every connection rolls need.
CONCURRENT_READS = 16
#: Events waiting for one subscriber; past it, the subscriber reads them from the log.
QUEUE_SIZE = 256
#: A checkpoint event at most this often per subscriber.
CHECKPOINT_SECONDS = 1.0
#: A table's latest entry events its feed keeps, made once, for the subscribers that
#: catch up (a thousand streams opening on one table read them from memory, not each
#: from the log).
HISTORY = 256

_entry = msgspec.json.Decoder(Entry)
_log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder()


class TooManySubscribersError(Exception):
    """This process already serves its most subscribers."""


class Message(NamedTuple):
    """What a table's stream sends next, as the HTTP adapter writes it (``api.sse``): a
    ``checkpoint`` (``data``), or ``frame``: events already in SSE's bytes (entries, each
    made once for every subscriber, cosignatures and heartbeats), all that were waiting
    at once, in order."""

    event: Literal["entry", "checkpoint", "cosignature", "heartbeat"]
    data: str | None = None
    id: int | None = None
    frame: bytes | None = None


class _Event(msgspec.Struct, frozen=True):
    #: The entry's seq; 0 for a cosignature.
    seq: int
    #: The event in SSE's bytes, made once for all its subscribers (its JSON is one line).
    frame: bytes
    cosignature: bool = False


#: A heartbeat in SSE's bytes: a comment line.
HEARTBEAT_FRAME = b": heartbeat\n\n"
#: Put in an idle subscriber's queue by the hub's ticker: time for a heartbeat.
_HEARTBEAT = _Event(-1, HEARTBEAT_FRAME)


def cosignature_event(data: bytes) -> _Event:
    return _Event(0, b"event: cosignature\ndata: " + data + b"\n\n", cosignature=True)


def event_of(seq: int, entry_json: bytes) -> _Event:
    """An entry's event data: the entry as stored (its signed bytes) and its words."""
    entry = _entry.decode(entry_json)
    words = _encode.encode(words_or_none(entry.mechanic, entry.request, entry.outcome))
    data = b'{"entry":' + entry_json + b',"words":' + words + b"}"
    return _Event(seq, b"id: %d\nevent: entry\ndata: %s\n\n" % (seq, data))


class Subscription:
    """One client's place in a table's events.

    Its queue is a deque with one waiting future, not an ``asyncio.Queue``: the feed
    offers every event to every subscriber of its table, so what an offer and a wake-up
    cost is paid a thousand times an event on a busy table."""

    def __init__(
        self, hub: TableEvents, table: str, after: int, *, cosignatures: bool = False
    ) -> None:
        self.hub = hub
        self.table = table
        self.cosignatures = cosignatures
        self.last = after
        self.queue: deque[_Event] = deque()
        self.behind = False
        #: When this subscriber was last sent anything (the ticker's heartbeat clock).
        self.sent_at = time.monotonic()
        #: Writes a chunk to this subscriber's client, set by the HTTP adapter; with it,
        #: the feed writes the next entry of a caught-up subscriber itself (``deliver``).
        self.writer: Callable[[bytes], Coroutine[Any, Any, None]] | None = None
        #: Checkpoint events follow bursts, which the stream's own task sends.
        self.direct = True
        #: A write of the feed's that did not finish at once (the client reads slowly):
        #: the stream's task waits for it before it writes anything of its own.
        self.writing: asyncio.Future[None] | None = None
        self.failed: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        #: The table's feed (set by ``TableEvents.subscribe``): its history serves a
        #: catch-up from memory where it can.
        self.feed: _Feed | None = None

    def deliver(self, event: _Event) -> None:
        """``event`` to this subscriber: written at once by the feed's task where the
        subscriber's own task waits with nothing before it (the next entry, nothing
        queued, no write pending), so a thousand subscribers of one table cost a thousand
        writes and no wake-up; otherwise queued for its task (``offer``)."""
        waiter = self._waiter
        if (
            self.writer is None
            or not self.direct
            or event.cosignature
            or event.seq != self.last + 1
            or self.queue
            or self.writing is not None
            or waiter is None
            or waiter.done()
        ):
            self.offer(event)
            return
        self.last = event.seq
        self.sent_at = time.monotonic()
        write = self.writer(event.frame)
        try:
            # One step of the write: a socket with room takes the chunk and returns.
            blocked = write.send(None)
        except StopIteration:
            return
        except Exception as error:  # the client is gone: its task ends the stream
            self.failed = error
            waiter.set_result(None)
            return
        self.writing = asyncio.ensure_future(_finish(write, blocked))

    def offer(self, event: _Event) -> None:
        if event.cosignature and not self.cosignatures:
            return
        if len(self.queue) >= QUEUE_SIZE:
            self.behind = True  # it reads what it missed from the log instead
            return
        self.queue.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next_events(self) -> list[_Event]:
        """Every event waiting, at least one (waiting for it if need be), once the feed's
        own write to this subscriber, if one is pending, is done."""
        while not self.queue and self.failed is None:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self.writing is not None:
            try:
                await self.writing
            finally:
                self.writing = None
        if self.failed is not None:
            raise self.failed
        events = list(self.queue)
        self.queue.clear()
        return events

    def close(self) -> None:
        if self.writing is not None:
            self.writing.cancel()


class _Feed:
    """One blocking reader of a table's log, fanning entries out to its subscribers, and
    the table's latest entry events (``HISTORY``), each made once: the live ones as they
    arrive and those its subscribers read from the log as they catch up. A seq's entry
    never changes, so an event kept is the one the log would give again."""

    def __init__(self, hub: TableEvents, table: str) -> None:
        self.hub = hub
        self.table = table
        self.subscribers: set[Subscription] = set()
        self.started = asyncio.Event()
        self.history: dict[int, _Event] = {}
        self.newest = 0
        #: Held by the subscriber of this table reading its log (``_catch_up``).
        self.reading = asyncio.Lock()
        self.task = asyncio.ensure_future(self._run())

    def event(self, seq: int, entry_json: bytes) -> _Event:
        """The event of entry ``seq`` (its stored JSON ``entry_json``), made once."""
        event = self.history.get(seq)
        if event is None:
            event = event_of(seq, entry_json)
            self.keep(event)
        return event

    def keep(self, event: _Event) -> None:
        if event.seq <= self.newest - HISTORY:
            return
        self.history[event.seq] = event
        self.newest = max(self.newest, event.seq)
        if len(self.history) > 2 * HISTORY:
            floor = self.newest - HISTORY
            self.history = {seq: kept for seq, kept in self.history.items() if seq > floor}

    async def _run(self) -> None:
        follower = TableFollower(self.hub.feeds_redis, self.table)
        await follower.start()
        self.started.set()
        while self.subscribers:
            try:
                arrived = await follower.read(count=100, block_ms=BLOCK_MS)
            except RedisError:
                await asyncio.sleep(1.0)
                continue
            for kind, seq, data in arrived:
                event = cosignature_event(data) if kind == "cosignature" else self.event(seq, data)
                for subscriber in list(self.subscribers):
                    subscriber.deliver(event)


class TableEvents:
    """This process's feeds, by table, and its subscriber count."""

    def __init__(
        self,
        store: AuditStore,
        max_subscribers: int,
        heartbeat: float = HEARTBEAT_SECONDS,
        *,
        feeds_redis: Any = None,
    ) -> None:
        """``feeds_redis``: the client the blocking reads use, one connection per followed
        table, apart from the store's pool (which rolls need); the store's when None."""
        self.store = store
        self.max_subscribers = max_subscribers
        self.heartbeat = heartbeat
        self.feeds_redis = feeds_redis if feeds_redis is not None else store.redis
        self.reads = asyncio.Semaphore(CONCURRENT_READS)
        self.feeds: dict[str, _Feed] = {}
        self.count = 0
        self._ticker: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        """Every half heartbeat, a heartbeat for each subscriber sent nothing for one: one
        timer for the process, not one per subscriber per event."""
        while self.feeds:
            await asyncio.sleep(self.heartbeat / 2)
            due = time.monotonic() - self.heartbeat
            for feed in list(self.feeds.values()):
                for subscriber in list(feed.subscribers):
                    if subscriber.sent_at <= due and not subscriber.queue:
                        subscriber.sent_at = time.monotonic()
                        subscriber.offer(_HEARTBEAT)
        self._ticker = None

    async def subscribe(
        self, table: str, after: int, *, cosignatures: bool = False
    ) -> Subscription:
        if self.count >= self.max_subscribers:
            raise TooManySubscribersError
        self.count += 1
        subscription = Subscription(self, table, after, cosignatures=cosignatures)
        feed = self.feeds.get(table)
        if feed is None or feed.task.done():
            feed = self.feeds[table] = _Feed(self, table)
        feed.subscribers.add(subscription)
        subscription.feed = feed
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.ensure_future(self._tick())
        await feed.started.wait()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self.count -= 1
        feed = self.feeds.get(subscription.table)
        if feed is None:
            return
        feed.subscribers.discard(subscription)
        if not feed.subscribers:
            feed.task.cancel()
            del self.feeds[subscription.table]

    async def close(self) -> None:
        """Stop every feed, and close the feeds' own client (not the store's)."""
        if self._ticker is not None:
            self._ticker.cancel()
        for feed in list(self.feeds.values()):
            feed.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await feed.task
        self.feeds.clear()
        if self.feeds_redis is not self.store.redis:
            await self.feeds_redis.aclose()


async def _finish(write: Coroutine[Any, Any, None], blocked: Any) -> None:
    await _resumed(write, blocked)


@types.coroutine
def _resumed(write: Coroutine[Any, Any, None], blocked: Any) -> Generator[Any, Any, None]:
    """Drive ``write`` on from its first suspension (``blocked``: what it yielded, the
    future it waits for), as the task it now runs in would have: what the task sends or
    throws in goes on to ``write``, what ``write`` yields goes up to the task."""
    while True:
        try:
            sent = yield blocked
        except GeneratorExit:
            write.close()
            raise
        except BaseException as error:  # handed on to the write, as a task would
            try:
                blocked = write.throw(error)
            except StopIteration:
                return
        else:
            try:
                blocked = write.send(sent)
            except StopIteration:
                return


async def stream(subscription: Subscription, *, checkpoints: bool) -> AsyncGenerator[Message, None]:
    """The events of one subscription: the log after its start, then each new entry."""
    hub, table = subscription.hub, subscription.table
    subscription.direct = not checkpoints
    try:
        async for message in _catch_up(subscription, until=None):
            yield message
        if checkpoints:
            yield await _checkpoint(hub.store, table)
        sent_checkpoint = time.monotonic()
        while True:
            if subscription.behind:
                subscription.behind = False
                subscription.queue.clear()
                async for message in _catch_up(subscription, until=None):
                    yield message
            # Every event waiting goes out as one message (one write), in order; the
            # hub's ticker puts the heartbeats in.
            frames: list[bytes] = []
            for event in await subscription.next_events():
                if event is _HEARTBEAT:
                    frames.append(HEARTBEAT_FRAME)
                elif event.cosignature:
                    frames.append(event.frame)
                elif event.seq > subscription.last:
                    if event.seq > subscription.last + 1:  # a gap: what it missed, from the log
                        if frames:
                            yield Message("entry", frame=b"".join(frames))
                            frames = []
                        async for message in _catch_up(subscription, until=event.seq - 1):
                            yield message
                    subscription.last = event.seq
                    frames.append(event.frame)
            subscription.sent_at = time.monotonic()
            if frames:
                yield Message("entry", frame=b"".join(frames))
            wait = CHECKPOINT_SECONDS - (time.monotonic() - sent_checkpoint)
            if checkpoints and not subscription.queue and wait <= 0:
                yield await _checkpoint(hub.store, table)
                sent_checkpoint = time.monotonic()
    except Exception:
        # Past the response's start, nothing tells the client; the log says why.
        _log.exception("the event stream of table %r stopped", table)
        raise
    finally:
        subscription.close()
        hub.unsubscribe(subscription)


async def _catch_up(subscription: Subscription, *, until: int | None) -> AsyncIterator[Message]:
    """The entries after the subscriber's last, up to ``until`` (None: the table's head):
    from its feed's history while it holds the next one, then from the log; each run of
    them one message, so one write. One subscriber of a table reads at a time (its
    feed's ``reading``), so a thousand streams opening together on a table read its
    history from the log once and from memory after that."""
    hub, feed = subscription.hub, subscription.feed
    while True:
        async with feed.reading if feed is not None else contextlib.nullcontext(), hub.reads:
            head = until if until is not None else (await hub.store.head(subscription.table)).seq
            remembered = _remembered(subscription, head)
            page = (
                await hub.store.raw_page(subscription.table, after=subscription.last, until=head)
                if subscription.last < head
                else []
            )
            read = [
                feed.event(seq, entry_json) if feed is not None else event_of(seq, entry_json)
                for seq, entry_json in page
            ]
        if remembered:
            yield Message("entry", frame=b"".join(remembered))
        if read:
            subscription.last = read[-1].seq
            yield Message("entry", frame=b"".join(event.frame for event in read))
        if not page or subscription.last >= head:
            return


def _remembered(subscription: Subscription, head: int) -> list[bytes]:
    """The frames of the entries after the subscriber's last, up to ``head``, that its
    feed's history holds in a row (the subscriber's last moves past them)."""
    frames: list[bytes] = []
    feed = subscription.feed
    if feed is None:
        return frames
    history = feed.history
    while subscription.last < head:
        event = history.get(subscription.last + 1)
        if event is None:
            break
        subscription.last = event.seq
        frames.append(event.frame)
    return frames


async def _checkpoint(store: AuditStore, table: str) -> Message:
    checkpoint = await store.checkpoint(table)
    return Message("checkpoint", _encode.encode(checkpoint).decode())
