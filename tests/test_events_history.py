"""A thousand streams opening on one table: each reads the table's history, but the
process reads it from the log once and makes each entry's event once (its feed keeps
the latest ``HISTORY``); every subscriber still gets every entry, in order, once.

Before, each subscriber read the log and made every event of its own (the entry
decoded, its words made): a thousand subscribers of a table with a hundred entries cost
the process a hundred thousand of them, which is what slowed rolls on other tables.
These drive ``play.events`` with a stand-in store (counted reads of a log of frames),
so nothing but the catch-up is measured."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from fairroll.play import events
from fairroll.play.events import HISTORY, Subscription, TableEvents, _catch_up, _Event


class Log:
    """A table's log of ``length`` entries (seq ``n``'s stored JSON: ``b"n;"``), its
    reads counted; a Redis that has nothing new for a feed to follow."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.pages: list[tuple[int, int]] = []
        self.redis = SimpleNamespace(xrevrange=self.xrevrange, xread=self.xread)

    async def head(self, table: str) -> Any:
        await asyncio.sleep(0)  # a round trip: the others run meanwhile
        return SimpleNamespace(seq=self.length)

    async def raw_page(self, table: str, *, after: int, until: int) -> list[tuple[int, bytes]]:
        self.pages.append((after, until))
        await asyncio.sleep(0.001)
        return [(seq, b"%d;" % seq) for seq in range(after + 1, min(until, after + 500) + 1)]

    async def xrevrange(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []

    async def xread(self, *args: Any, **kwargs: Any) -> list[Any]:
        await asyncio.sleep(3600)
        return []


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The seqs whose events were made (an entry decoded, its words made)."""
    seqs: list[int] = []

    def event_of(seq: int, entry_json: bytes) -> _Event:
        seqs.append(seq)
        return _Event(seq, entry_json)

    monkeypatch.setattr(events, "event_of", event_of)
    return seqs


async def caught_up(subscription: Subscription) -> bytes:
    return b"".join([m.frame or b"" async for m in _catch_up(subscription, until=None)])


def everything(first: int, last: int) -> bytes:
    return b"".join(b"%d;" % seq for seq in range(first, last + 1))


def test_streams_opening_together_read_the_tables_history_from_the_log_once(
    made: list[int],
) -> None:
    async def scenario() -> tuple[list[bytes], list[tuple[int, int]]]:
        log = Log(100)
        hub = TableEvents(log, max_subscribers=1000)  # type: ignore[arg-type]
        subscriptions = [await hub.subscribe("t", 0) for _ in range(200)]
        got = await asyncio.gather(*(caught_up(s) for s in subscriptions))
        await hub.close()
        return got, log.pages

    got, pages = asyncio.run(scenario())
    assert got == [everything(1, 100)] * 200  # each: every entry, in order, once
    assert pages == [(0, 100)]  # one read of the log (each subscriber's, before)
    assert made == list(range(1, 101))  # each event made once (200 times, before)


def test_what_the_feed_no_longer_holds_comes_from_the_log_in_order(made: list[int]) -> None:
    """The feed has followed 1..1,000 live and holds the latest of them; a subscriber from
    0 reads the rest from the log (without gap or repeat), one within what it holds reads
    nothing from the log."""

    async def scenario() -> tuple[bytes, bytes, list[tuple[int, int]], list[tuple[int, int]]]:
        log = Log(1000)
        hub = TableEvents(log, max_subscribers=10)  # type: ignore[arg-type]
        early = await hub.subscribe("t", 0)
        late = await hub.subscribe("t", 1000 - HISTORY)
        feed = hub.feeds["t"]
        for seq in range(1, 1001):
            feed.keep(_Event(seq, b"%d;" % seq))
        assert 1 < min(feed.history) <= 1001 - HISTORY  # bounded, the latest held
        from_late = await caught_up(late)
        late_pages = list(log.pages)
        from_start = await caught_up(early)
        await hub.close()
        return from_start, from_late, late_pages, log.pages

    from_start, from_late, late_pages, pages = asyncio.run(scenario())
    assert from_late == everything(1001 - HISTORY, 1000)
    assert late_pages == []
    assert from_start == everything(1, 1000)
    assert pages == [(0, 1000), (500, 1000)]
