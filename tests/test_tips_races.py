"""A read answered after an append it was sent before is older news, not a log that went
back: ``audit.redis.tips`` fences only on a head behind what it held when the read was
sent. (Seen under repeated Redis stalls: a head read of 53, sent before seq 54's round and
answered after it, stopped a table that had lost nothing.)

``Tips.learn`` is pure; the race through ``Tips.head`` uses a stand-in for the Redis
client whose GET answers when the test says, since a real Redis answers in order and the
race is in which reply this process reads first."""

from __future__ import annotations

import asyncio
from typing import Any

from fairroll.audit.entry import Head
from fairroll.audit.keyspace import head_key
from fairroll.audit.redis.tips import Tips, head_value

H53, H54, OTHER54 = Head(53, "53" * 32), Head(54, "54" * 32), Head(54, "ff" * 32)


def tips() -> Tips:
    return Tips(None, None, None)  # type: ignore[arg-type]


def test_a_head_behind_the_anchor_held_when_the_read_was_sent_fences() -> None:
    t = tips()
    t.anchor("t", H54)
    assert not t.learn("t", H53, known=H54)
    assert "t" in t.fenced


def test_a_head_behind_only_an_anchor_set_meanwhile_is_older_news() -> None:
    t = tips()
    t.anchor("t", H53)
    t.remember("t", H53)
    t.anchor("t", H54)  # an append answered while the read was on its way
    t.remember("t", H54)
    assert t.learn("t", H53, known=H53)
    assert "t" not in t.fenced
    assert t.heads["t"] == H54  # the newer head is kept


def test_another_entry_at_a_seq_this_process_holds_fences_even_if_read_before() -> None:
    t = tips()
    t.anchor("t", H53)
    t.anchor("t", H54)
    assert not t.learn("t", OTHER54, known=H53)
    assert "t" in t.fenced


class SlowGet:
    """A Redis client whose GET of a head answers what Redis held when it was sent, only
    once ``answer`` is set."""

    def __init__(self, value: bytes) -> None:
        self.value = value
        self.answer = asyncio.Event()

    async def get(self, key: str) -> bytes:
        assert key == head_key("t")
        held = self.value
        await self.answer.wait()
        return held


def test_a_head_read_answered_after_an_append_returns_the_appended_head() -> None:
    async def scenario() -> tuple[Head, dict[str, Any]]:
        redis = SlowGet(head_value(H53).encode())
        t = Tips(redis, None, None)  # type: ignore[arg-type]
        t.anchor("t", H53)
        reading = asyncio.ensure_future(t.head("t"))
        await asyncio.sleep(0)
        t.remember("t", H54)  # the round that appended 54 is answered first
        t.anchor("t", H54)
        redis.answer.set()
        return await reading, dict(t.fenced)

    head, fenced = asyncio.run(scenario())
    assert fenced == {}
    assert head == H54
