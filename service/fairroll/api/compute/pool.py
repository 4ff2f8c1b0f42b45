"""CPU-heavy requests off the event loop, under a deadline that really stops them.

Odds, estimates and verification are pure functions of their input (and of the log
they read), but some take long enough to matter, and CPU work on the event loop
cannot be cancelled: one such request would hold every roll and ``/livez`` behind
it. So those requests (``is_compute``: every ``.../odds`` operation, the table
verification and the export upload) are answered by a small pool of worker
processes, each running this same app without a socket (``python -m
fairroll.api.compute.worker``, at ``nice 19`` so rolls win the CPU when both want it):

- the request (method, path, query, headers, body) goes to an idle worker; with none
  idle it waits in a bounded line, and past ``MAX_WAITING`` callers, or past its
  deadline, it is answered 503 with ``Retry-After``;
- a request that passes its deadline (``FAIRROLL_COMPUTE_TIMEOUT``), or is cancelled,
  has its worker killed (SIGKILL) and replaced: the work stops, whatever it was doing,
  and the answer is a 503 that says so;
- the worker's answer (status, headers, body) is relayed as it is, so a rule breach is
  the same 422 problem it would be in the main process.

The wire between service and worker is its own (``wire``): one frame per message, an
8-byte big-endian length and a pickle of plain tuples, over the worker's stdin and
stdout; the worker is its own program (``worker``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import sys
from collections.abc import Callable
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from fairroll.api.compute.wire import FRAME, Request, Response
from fairroll.api.problems import problem

__all__ = ["ComputePool", "compute_middleware", "is_compute"]

MAX_WAITING = 32
#: Operations answered by a compute worker (besides every ``.../odds`` operation).
COMPUTE_OPERATIONS = frozenset({"verifyTable", "verifyExport"})
WORKER_ENV = "FAIRROLL_COMPUTE_WORKER"


def is_compute(scope: Scope) -> bool:
    """Whether this routed request is answered by a compute worker."""
    template = scope.get("path_template") or ""
    if template.endswith("/odds"):
        return True
    handler = scope.get("route_handler")
    return getattr(handler, "operation_id", None) in COMPUTE_OPERATIONS


class BusyError(Exception):
    """Every worker stayed busy (or the line was full) until the deadline."""


class DeadlineError(Exception):
    """The work did not finish within its deadline; its worker was killed."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def call(self, request: Request) -> Response:
        stdin, stdout = self.process.stdin, self.process.stdout
        if stdin is None or stdout is None:  # pragma: no cover - always piped
            raise RuntimeError("worker without pipes")
        payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        stdin.write(FRAME.pack(len(payload)) + payload)
        await stdin.drain()
        (size,) = FRAME.unpack(await stdout.readexactly(FRAME.size))
        response: Response = pickle.loads(await stdout.readexactly(size))  # noqa: S301
        return response

    async def ready(self) -> None:
        if self.process.stdout is None:  # pragma: no cover - always piped
            raise RuntimeError("worker without pipes")
        (size,) = FRAME.unpack(await self.process.stdout.readexactly(FRAME.size))
        await self.process.stdout.readexactly(size)

    def kill(self) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


class ComputePool:
    """``workers`` worker processes; ``run`` has one of them answer one request."""

    def __init__(self, workers: int, deadline: float) -> None:
        self.size = workers
        self.deadline = deadline
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: set[_Worker] = set()
        self._waiting = 0
        self._closed = False
        self._spawning: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        for _ in range(self.size):
            self._respawn()

    @property
    def started(self) -> bool:
        """At least one worker has started (``/readyz`` waits for it)."""
        return bool(self._all)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._spawning):
            with contextlib.suppress(BaseException):
                await task
        for worker in list(self._all):
            worker.kill()
            with contextlib.suppress(Exception):
                await worker.process.wait()
        self._all.clear()

    async def run(self, request: Request) -> Response:
        loop = asyncio.get_running_loop()
        until = loop.time() + self.deadline
        if self._waiting >= MAX_WAITING:
            raise BusyError(f"{MAX_WAITING} calculations are already waiting")
        self._waiting += 1
        try:
            async with asyncio.timeout(self.deadline):
                worker = await self._idle.get()
        except TimeoutError:
            raise BusyError("every calculation worker stayed busy") from None
        finally:
            self._waiting -= 1
        finished = False
        try:
            async with asyncio.timeout(max(0.001, until - loop.time())):
                response = await worker.call(request)
            finished = True
            return response
        except TimeoutError:
            raise DeadlineError(
                f"the calculation did not finish within {self.deadline:g} s and was stopped"
            ) from None
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise DeadlineError("the calculation worker stopped; retry") from exc
        finally:
            if finished and worker.alive:
                self._idle.put_nowait(worker)
            else:  # cancelled, timed out or crashed: stop it, start another
                self._all.discard(worker)
                worker.kill()
                self._respawn()

    def _respawn(self) -> None:
        if self._closed:
            return
        task = asyncio.ensure_future(self._spawn())
        self._spawning.add(task)
        task.add_done_callback(self._spawning.discard)

    async def _spawn(self) -> None:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "fairroll.api.compute.worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, WORKER_ENV: "1"},
            limit=2**30,
        )
        worker = _Worker(process)
        try:  # the worker says it is ready once its app has started
            await worker.ready()
        except (asyncio.IncompleteReadError, ConnectionError):
            worker.kill()
            raise
        self._all.add(worker)
        self._idle.put_nowait(worker)


def compute_middleware(
    pool_of: Callable[[Scope], ComputePool | None],
) -> Callable[[ASGIApp], ASGIApp]:
    """Litestar middleware (after routing): compute requests are answered by the pool."""

    def middleware(app: ASGIApp) -> ASGIApp:
        async def relayed(scope: Scope, receive: Receive, send: Send) -> None:
            pool = pool_of(scope) if scope["type"] == ScopeType.HTTP else None
            if pool is None or not is_compute(scope):
                await app(scope, receive, send)
                return
            body = bytearray()
            while True:
                message: Any = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            http: Any = scope
            client = http.get("client")
            request: Request = (
                str(http["method"]),
                str(http["path"]),
                bytes(http.get("query_string", b"")),
                list(http["headers"]),
                bytes(body),
                (str(client[0]), int(client[1])) if client else None,
            )
            try:
                status, headers, content = await pool.run(request)
            except (BusyError, DeadlineError) as exc:
                status, headers, content = _unavailable(str(exc))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content, "more_body": False})

        return relayed

    return middleware


def _unavailable(detail: str) -> Response:
    return problem(
        503,
        "calculation-unavailable",
        "The calculation could not be made now",
        f"{detail}. Nothing was recorded; retry shortly.",
        1,
    )
