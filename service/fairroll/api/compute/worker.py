"""The compute worker: a process of its own running the app without a socket, answering
the requests its parent's pool (``pool``) sends it over stdin and stdout.

Started as ``python -m fairroll.api.compute.worker`` by the pool only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from fairroll.api.app import create_app_from_env
from fairroll.api.compute.wire import FRAME, Request, Response

__all__ = ["main"]


async def _answer(app: Any, request: Request) -> Response:
    method, path, query, headers, body, client = request
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query,
        "headers": headers,
        "client": client,
        "server": ("127.0.0.1", 0),
        "state": {},
    }
    sent = False
    started: dict[str, Any] = {}
    content = bytearray()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            started.update(message)
        elif message["type"] == "http.response.body":
            content.extend(message.get("body", b""))

    await app(scope, receive, send)
    return int(started.get("status", 500)), list(started.get("headers", [])), bytes(content)


async def _lifespan(app: Any) -> Callable[[], Any]:
    """Start the app's lifespan (Redis, signer); returns what shuts it down."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    task = asyncio.ensure_future(app({"type": "lifespan"}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    reply = await outbox.get()
    if reply["type"] != "lifespan.startup.complete":
        raise RuntimeError(f"the compute worker's app did not start: {reply}")

    async def shutdown() -> None:
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await task

    return shutdown


def _read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(FRAME.size)
    if len(header) < FRAME.size:
        return None
    (size,) = FRAME.unpack(header)
    return stream.read(size)


async def _serve(inbox: BinaryIO, outbox: BinaryIO) -> None:
    app = create_app_from_env()
    shutdown = await _lifespan(app)
    ready = pickle.dumps("ready")
    outbox.write(FRAME.pack(len(ready)) + ready)
    outbox.flush()
    try:
        while True:
            frame = await asyncio.to_thread(_read_frame, inbox)
            if frame is None:
                return
            request: Request = pickle.loads(frame)  # noqa: S301 - from our parent only
            reply = pickle.dumps(await _answer(app, request), protocol=pickle.HIGHEST_PROTOCOL)
            outbox.write(FRAME.pack(len(reply)) + reply)
            outbox.flush()
    finally:
        await shutdown()


def main() -> None:
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the frames
    with contextlib.suppress(OSError):
        os.nice(19)  # rolls first: a calculation takes what the event loop leaves
    asyncio.run(_serve(inbox, outbox))


if __name__ == "__main__":
    main()
