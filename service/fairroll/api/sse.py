"""A table's events as Server-Sent Events (``play.events`` makes them; this names them
in SSE's words and writes them), and where a reconnecting ``EventSource`` resumes."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, Iterable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from litestar.response import ServerSentEventMessage, Stream
from litestar.response.streaming import ASGIStreamingResponse

from fairroll.api import request_headers
from fairroll.play.events import Message, Subscription, stream

if TYPE_CHECKING:
    from litestar import Litestar, Request
    from litestar.background_tasks import BackgroundTask, BackgroundTasks
    from litestar.datastructures import Cookie
    from litestar.response.base import ASGIResponse
    from litestar.types import Receive, Send, TypeEncodersMap

__all__ = ["EventStream", "last_event_id"]


class EventStream(Stream):
    """A table's events, written by a loop of ours rather than Litestar's ``Stream``'s:
    one event reaches a thousand subscribers of a table at once, so each layer between
    a subscriber's wake-up and its socket (a task group per response, a generator that
    names the bytes, a task that pumps them) is paid a thousand times an event. Here the
    request's own task writes each message as ``play.events.stream`` makes it, and a
    second task only waits for the client to leave."""

    def __init__(self, subscription: Subscription, *, checkpoints: bool) -> None:
        self.subscription = subscription
        super().__init__(
            stream(subscription, checkpoints=checkpoints),  # type: ignore[arg-type]
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    def to_asgi_response(
        self,
        app: Litestar | None,
        request: Request[Any, Any, Any],
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Iterable[Cookie] | None = None,
        encoded_headers: Iterable[tuple[bytes, bytes]] | None = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> ASGIResponse:
        """``Stream.to_asgi_response``'s merge of headers and cookies, into our writer."""
        return _EventsResponse(
            self.subscription,
            iterator=self.iterator,
            background=self.background or background,
            content_length=0,
            cookies=itertools.chain(self.cookies, cookies or ()),
            encoded_headers=encoded_headers,
            encoding=self.encoding,
            headers={**headers, **self.headers} if headers is not None else self.headers,
            is_head_response=is_head_response,
            media_type=str(self.media_type or media_type),
            status_code=self.status_code or status_code,
        )


class _EventsResponse(ASGIStreamingResponse):
    __slots__ = ("subscription",)

    def __init__(self, subscription: Subscription, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.subscription = subscription

    async def send_body(self, send: Send, receive: Receive) -> None:
        """Each message as one body chunk, from this task, and each entry the feed writes
        itself (``Subscription.deliver``) with the same ``send``; the client's leaving
        (which a second task waits for) cancels this task."""

        async def write(frame: bytes) -> None:
            await send({"type": "http.response.body", "body": frame, "more_body": True})

        self.subscription.writer = write
        writer = asyncio.current_task()
        assert writer is not None  # noqa: S101 (always, inside a request)
        left = asyncio.ensure_future(_until_disconnect(receive))
        left.add_done_callback(lambda done: done.cancelled() or writer.cancel())
        messages: AsyncGenerator[Message, None] = self.iterator  # type: ignore[assignment]
        try:
            async with aclosing(messages):
                async for message in messages:
                    await send(
                        {"type": "http.response.body", "body": _bytes(message), "more_body": True}
                    )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not left.done() or left.cancelled():
                raise  # not the client leaving: the server stopping
            writer.uncancel()  # the client left: the stream ends here, quietly
        finally:
            left.cancel()


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _bytes(message: Message) -> bytes:
    if message.frame is not None:
        return message.frame
    return ServerSentEventMessage(data=message.data, event=message.event, id=message.id).encode()


def last_event_id(header: str | None, after: int | None) -> int:
    """Where a stream resumes: ``Last-Event-ID`` (a seq) wins over ``?after=``; a header
    that is not a seq is refused (``request_headers.last_event_id``)."""
    return request_headers.last_event_id(header, after)
