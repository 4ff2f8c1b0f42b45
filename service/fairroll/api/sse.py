"""A table's events as Server-Sent Events (``play.events`` makes them; this names them
in SSE's words), and where a reconnecting ``EventSource`` resumes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

from litestar.response import ServerSentEventMessage

from fairroll.play.events import Message

__all__ = ["last_event_id", "server_sent"]


HEARTBEAT = b": heartbeat\n\n"


async def server_sent(messages: AsyncGenerator[Message, None]) -> AsyncIterator[bytes]:
    """Each message in SSE's bytes (an entry's and a cosignature's made once for all their
    subscribers: ``Message.frame``); closing this closes ``messages`` (and so ends the
    subscription) at once."""
    async with aclosing(messages) as each:
        async for message in each:
            if message.frame is not None:
                yield message.frame
            elif message.event == "heartbeat":
                yield HEARTBEAT
            else:
                encoded = ServerSentEventMessage(
                    data=message.data, event=message.event, id=message.id
                ).encode()
                yield encoded


def last_event_id(header: str | None, after: int | None) -> int:
    """Where a stream resumes: ``Last-Event-ID`` (a seq) wins over ``?after=``."""
    if header is not None and header.strip().isdigit():
        return int(header.strip())
    return after or 0
