"""What the tests share besides fixtures: the test signing key, a real fairroll server
process on a free port, running the Node scripts of the tests, and reading odds answers."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx

from fairroll.audit import load_signer
from fairroll.redis_server import free_port

__all__ = [
    "CLIENTS",
    "TEST_ROOT",
    "TEST_SIGNING_KEY",
    "LiveServer",
    "SessionTokens",
    "browser_ready",
    "chance",
    "chances",
    "player_client",
    "run_node",
    "typescript_client_lock",
]


def run_node(script: Path, *args: object, timeout: float = 60) -> Any:
    """Run a Node script of the tests and return the JSON it prints."""
    node = shutil.which("node")
    assert node is not None, "node (>= 20) is needed"
    run = subprocess.run(
        [node, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)


#: A fixed test signing key (the 32-byte Ed25519 seed, base64), so tests can pin key ids.
def fairroll_cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m fairroll.cli ARGS``: what it printed and its exit status."""
    return subprocess.run(
        [sys.executable, "-m", "fairroll.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


TEST_SIGNING_KEY = base64.b64encode(bytes(range(32))).decode()
#: The test servers' root key id: the test key is a root, certifying itself.
TEST_ROOT = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id


class LiveServer:
    """A ``fairroll`` ASGI server process (the production server) on a free port."""

    def __init__(
        self,
        redis_url: str,
        log: Path,
        *,
        server: str = "granian",
        env: dict[str, str] | None = None,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY,
            "FAIRROLL_REDIS_TIMEOUT": "0.5",
            **(env or {}),
        }
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairroll.cli",
                "serve",
                "--port",
                str(self.port),
                "--server",
                server,
            ],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.log_path = log
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/livez", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"fairroll did not start:\n{log.read_text()}")
            time.sleep(0.05)
        # Odds and verification need a calculation worker; /readyz says when one is up.
        while time.monotonic() < deadline:
            try:
                ready = httpx.get(f"{self.url}/readyz", timeout=5)
                if "calculation workers are starting" not in ready.text:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


#: The header a seed session's player shows (``play.sessions.SESSION_TOKEN_HEADER``).
SESSION_TOKEN_HEADER = "Fairroll-Session-Token"
_OPENED = re.compile(r"/v1/tables/[^/]+/seeds")
_REVEALED = re.compile(r"/v1/tables/[^/]+/seeds/([^/]+)/reveal")


class SessionTokens:
    """A player's memory of the seed sessions it opened, kept as the clients keep it.

    The server requires a session's token by default: a roll in the session and its
    reveal show, in ``Fairroll-Session-Token``, the ``token`` its opening answered. An
    httpx client given these hooks (``player_client``) keeps each token it was answered
    and shows it with each roll naming that session and with its reveal, so a test rolls
    in its sessions as the page and both client packages do. A call that already sets
    the header keeps its own; a session this client did not open gets none (a stranger's
    call: use a client of its own for it).
    """

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}

    def hooks(self) -> dict[str, list[Any]]:
        """The ``event_hooks`` of an ``httpx.Client``."""
        return {"request": [self.show], "response": [self.keep]}

    def show(self, request: httpx.Request) -> None:
        """Show the token of the session the request rolls in or reveals, if kept."""
        seed_id = _session_of(request)
        token = self.tokens.get(seed_id) if seed_id else None
        if token is not None and SESSION_TOKEN_HEADER not in request.headers:
            request.headers[SESSION_TOKEN_HEADER] = token

    def keep(self, response: httpx.Response) -> None:
        """Keep the token of a session this answer opened."""
        request = response.request
        if request.method != "POST" or not _OPENED.fullmatch(request.url.path):
            return
        if response.status_code != 201:
            return
        response.read()
        opened = response.json()
        self.tokens[opened["seed_id"]] = opened["token"]


def player_client(
    base_url: str, tokens: SessionTokens | None = None, **options: Any
) -> httpx.Client:
    """An ``httpx.Client`` that keeps and shows its seed sessions' tokens: its own, or
    ``tokens`` shared with the player's clients of other servers of the same Redis."""
    hooks = (tokens or SessionTokens()).hooks()
    return httpx.Client(base_url=base_url, event_hooks=hooks, **options)


def _session_of(request: httpx.Request) -> str | None:
    """The seed session a request reveals (its path) or rolls in (its body's ``session``)."""
    revealed = _REVEALED.fullmatch(request.url.path)
    if revealed:
        return revealed.group(1)
    if request.method != "POST":
        return None
    try:
        body = json.loads(request.content)
    except (httpx.RequestNotRead, ValueError, RecursionError):  # a hostile body: no session
        return None
    session = body.get("session") if isinstance(body, dict) else None
    seed_id = session.get("seed_id") if isinstance(session, dict) else None
    return seed_id if isinstance(seed_id, str) else None


def verified_export(
    client: httpx.Client, table: str, folder: Path
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A table's export (written to ``folder``) and what ``fairroll verify`` said of it,
    with the server's keys, under the test servers' root."""
    export = folder / "export.ndjson"
    export.write_bytes(client.get(f"/v1/tables/{table}/export").content)
    keys = folder / "keys.json"
    keys.write_text(client.get("/v1/keys").text)
    verified = subprocess.run(
        [
            *[sys.executable, "-m", "fairroll.cli", "verify", str(export)],
            *["--keys", str(keys), "--root", TEST_ROOT],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return export, verified


def chances(odds: dict[str, Any], name: str) -> dict[Any, str]:
    """One distribution of an odds answer: outcome -> exact probability (a fraction's text)."""
    for distribution in odds["distributions"]:
        if distribution["name"] == name:
            return {c["outcome"]: c["probability"]["exact"] for c in distribution["chances"]}
    raise KeyError(f"no distribution {name!r} in {[d['name'] for d in odds['distributions']]}")


def chance(odds: dict[str, Any], name: str, outcome: Any) -> Fraction:
    """The exact probability of one outcome of one distribution (0 if it is not listed)."""
    return Fraction(chances(odds, name).get(outcome, "0"))


BROWSER = Path(__file__).resolve().parent / "browser"


def browser_ready() -> Path:
    """The browser scripts' folder, with Debian's chromium and playwright-core installed
    (the README's test command installs what the tests need). One test process installs
    at a time (a lock file): parallel workers share the folder."""
    import fcntl  # noqa: PLC0415 - POSIX only, like the browser tests

    with (BROWSER / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shutil.which("chromium") is None and shutil.which("apt-get") is not None:
            subprocess.run(
                ["apt-get", "update", "-qq"], check=False, timeout=300, capture_output=True
            )
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "chromium"],
                check=False,
                timeout=600,
                capture_output=True,
            )
        assert shutil.which("chromium") is not None, (
            "Debian's chromium is needed (apt-get install chromium)"
        )
        if not (BROWSER / "node_modules" / "playwright-core").exists():
            npm = shutil.which("npm")
            assert npm is not None
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=BROWSER,
                check=True,
                timeout=300,
                capture_output=True,
            )
    return BROWSER


CLIENTS = Path(__file__).resolve().parent.parent / "clients"


@contextlib.contextmanager
def typescript_client_lock() -> Iterator[Path]:
    """Hold the TypeScript client's folder (``npm ci``, a build, a pack write in it): one
    test process at a time, as parallel workers share it."""
    import fcntl  # noqa: PLC0415 - POSIX only, like npm's own tests here

    folder = CLIENTS / "typescript"
    with (folder / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


@contextlib.contextmanager
def built_typescript_client() -> Iterator[Path]:
    """The npm package built (``npm ci`` once, then ``npm run build``: tsc --strict) and
    held while the caller uses its ``dist/index.js``."""
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed (Debian: nodejs npm)"
    with typescript_client_lock() as folder:

        def run(*args: str) -> None:
            done = subprocess.run(
                [npm, *args], cwd=folder, capture_output=True, text=True, timeout=600, check=False
            )
            assert done.returncode == 0, done.stdout + done.stderr

        if not (folder / "node_modules" / ".package-lock.json").exists():
            run("ci", "--no-audit", "--no-fund")
        run("run", "build")
        yield folder / "dist" / "index.js"
