"""Build the container image from a Debian base made here, run it, and roll on it.

    python scripts/image.py [--tag localhost/fairroll:ci] [--mirror URL] [--keep]

What CI proves with it (``.ci/run``), each step timed:

1. **Base**: ``debootstrap --variant=minbase`` makes a Debian bookworm root file system with
   python3, its venv module, tini and the CA certificates, from Debian's packages alone;
   ``podman import`` turns it into the base image. No registry is asked for anything.
2. **Build**: ``buildah bud`` builds the Dockerfile with ``--build-arg BASE=`` that base
   (chroot isolation, as a container runtime is not needed to build). The image installs
   ``requirements/service.lock`` with its hashes.
3. **Run**: the built image serves as its own configuration says (its entrypoint, user,
   environment, working directory), on a read-only root with a tmpfs at /tmp, against a
   durable redis-server on loopback. ``podman run`` is tried first; where the sandbox
   refuses a container runtime (this workplace's does: crun may not set rlimits or
   cgroups), the image's root file system is mounted read-only and the entrypoint run
   under ``chroot --userspec`` as the image's user, in a PID namespace of its own (tini is
   PID 1), and the script says which it did.
4. **Roll**: a dice roll and an FBC roll are answered; the server process runs as the
   image's numeric user and cannot write to its root; the table's export verifies with
   ``fairroll verify`` against the server's keys under its root key id.

Needs root, debootstrap, podman, buildah and redis-server (``.ci/run`` installs them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
BASE_TAG = "localhost/fairroll-base:bookworm"
#: Debian's packages the Dockerfile expects of its base (it installs tini itself if absent).
BASE_PACKAGES = "python3,python3-venv,tini,ca-certificates"
#: The user the Dockerfile names; the run checks that the server process has it.
IMAGE_USER = "10001:10001"
READY_SECONDS = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default="localhost/fairroll:ci")
    parser.add_argument("--mirror", default="http://deb.debian.org/debian")
    parser.add_argument("--keep", action="store_true", help="keep the images afterwards")
    args = parser.parse_args()
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="fairroll-image-", dir="/var/tmp") as folder:
        work = Path(folder)
        with _timed(timings, "base (debootstrap + import)"):
            bootstrap(work / "rootfs", args.mirror)
        with _timed(timings, "build (buildah bud)"):
            build(args.tag)
        try:
            with _timed(timings, "run and roll"):
                how = run_and_roll(args.tag, work)
        finally:
            if not args.keep:
                subprocess.run(["podman", "rmi", "-f", args.tag, BASE_TAG], check=False)
    print(f"image {args.tag}: served as {IMAGE_USER} on a read-only root ({how})")
    for step, seconds in timings.items():
        print(f"  {step}: {seconds:.1f} s")
    print(f"  total: {sum(timings.values()):.1f} s")
    return 0


def bootstrap(rootfs: Path, mirror: str) -> None:
    """A minimal Debian bookworm with what the Dockerfile's BASE must have, as an image."""
    command = ["debootstrap", "--variant=minbase", f"--include={BASE_PACKAGES}"]
    _run([*command, "bookworm", str(rootfs), mirror], quiet=True)
    for cached in (rootfs / "var/cache/apt/archives").glob("*.deb"):
        cached.unlink()
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    _run(["podman", "import", "-", BASE_TAG], stdin=tar.stdout, quiet=True)
    if tar.wait() != 0:
        raise SystemExit("tar of the bootstrapped root failed")
    shutil.rmtree(rootfs)


def build(tag: str) -> None:
    command = ["buildah", "bud", "--isolation", "chroot", "--format", "docker", "--pull-never"]
    command += ["--layers=false", "--build-arg", f"BASE={BASE_TAG}", "-t", tag]
    bundle = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if bundle and Path(bundle).is_file():
        # The host's bundle (which knows the proxy's CA, where there is one) for pip.
        command += ["-v", f"{bundle}:{bundle}:ro", "--build-arg", f"PIP_CERT={bundle}"]
    _run([*command, str(ROOT)], quiet=True)


def run_and_roll(tag: str, work: Path) -> str:
    config = _image_config(tag)
    if config["User"] != IMAGE_USER:
        raise SystemExit(f"the image runs as {config['User']!r}, not {IMAGE_USER}")
    key = work / "signing-key.pem"
    _run([sys.executable, "-m", "fairroll", "new-key", "--out", str(key)], quiet=True)
    port = _free_port()
    env = {
        "FAIRROLL_SIGNING_KEY": key.read_text(),
        "FAIRROLL_PORT": str(port),
        "FAIRROLL_HOST": "127.0.0.1",
        "FAIRROLL_COMPUTE_WORKERS": "1",
    }
    with _redis(work) as redis_url:
        env["REDIS_URL"] = redis_url
        with _served(tag, config, env, work) as (how, uid_of):
            base = f"http://127.0.0.1:{port}"
            _wait_ready(base)
            rolled = _post(f"{base}/v1/dice/rolls", {"formula": "4d6kh3+2"})
            _post(f"{base}/v1/fbc/rolls", {"pool": 5, "risk": 3})
            uid = uid_of()
            if uid != IMAGE_USER.split(":", maxsplit=1)[0]:
                raise SystemExit(f"the server ran as uid {uid}, not the image's {IMAGE_USER}")
            export = work / "export.ndjson"
            export.write_bytes(_get(f"{base}/v1/tables/{rolled['receipt']['table']}/export"))
            keys = work / "keys.json"
            keys.write_bytes(_get(f"{base}/v1/keys"))
    root = json.loads(keys.read_text())["root"]
    verify = [sys.executable, "-m", "fairroll", "verify", str(export)]
    _run([*verify, "--keys", str(keys), "--root", root])
    return how


@contextlib.contextmanager
def _served(
    tag: str, config: dict[str, object], env: dict[str, str], work: Path
) -> Iterator[tuple[str, Callable[[], str]]]:
    """The image's entrypoint serving, in podman if the sandbox allows, else under chroot."""
    name = f"fairroll-ci-{os.getpid()}"
    flags = ["--read-only", "--tmpfs", "/tmp", "--network", "host"]  # noqa: S108 (the image's)
    flags += ["--no-healthcheck"]
    flags += ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=1024:1024"]
    flags += [f"--env={k}={v}" for k, v in env.items()]
    started = subprocess.run(
        ["podman", "run", "-d", "--name", name, *flags, tag],
        capture_output=True,
        text=True,
        check=False,
    )
    if started.returncode == 0:
        try:
            yield "podman run", lambda: _podman_uid(name)
        finally:
            subprocess.run(["podman", "rm", "-f", name], capture_output=True, check=False)
        return
    refusal = started.stderr.strip().splitlines()[-1] if started.stderr.strip() else "?"
    print(f"podman run refused here ({refusal}): running the image's root under chroot")
    subprocess.run(["podman", "rm", "-f", name], capture_output=True, check=False)
    with _chroot(tag, config, env, work) as process:
        yield "chroot of the image's root file system", lambda: _proc_uid(process.pid)


@contextlib.contextmanager
def _chroot(
    tag: str, config: dict[str, object], env: dict[str, str], work: Path
) -> Iterator[subprocess.Popen[bytes]]:
    container = _output(["buildah", "from", "--pull-never", tag])
    mounts: list[Path] = []
    process: subprocess.Popen[bytes] | None = None
    try:
        image_root = Path(_output(["buildah", "mount", container]))
        root = work / "root"
        root.mkdir()
        _mount(["--bind", str(image_root), str(root)], mounts, root)
        _run(["mount", "-o", "remount,bind,ro", str(root)])
        _mount(["-t", "proc", "proc", str(root / "proc")], mounts, root / "proc")
        _mount(["--bind", "/dev", str(root / "dev")], mounts, root / "dev")
        _mount(["-t", "tmpfs", "-o", "size=64m,mode=1777", "tmpfs", str(root / "tmp")], mounts)
        probe = subprocess.run(
            ["chroot", f"--userspec={IMAGE_USER}", str(root), "/bin/sh", "-c", "touch /probe"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 or "Read-only" not in probe.stderr:
            raise SystemExit(f"the image's root is writable: {probe.stderr.strip()!r}")
        image_env = dict(item.split("=", 1) for item in _strings(config, "Env"))
        command = [*_strings(config, "Entrypoint"), *_strings(config, "Cmd")]
        process = subprocess.Popen(
            # A PID namespace of its own, so the entrypoint's tini is PID 1 as in a container.
            [
                *("unshare", "--pid", "--fork", "--kill-child"),
                *("chroot", f"--userspec={IMAGE_USER}", str(root), "/bin/sh", "-c"),
                *('cd "$0" && exec "$@"', str(config.get("WorkingDir") or "/"), *command),
            ],
            env={**image_env, **env},
        )
        yield process
    finally:
        if process is not None:
            # unshare waits with SIGTERM ignored: the signal goes to its child, tini, which
            # forwards it to the server, as a container runtime's stop would.
            children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text()
            for child in children.split():
                os.kill(int(child), signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                # Killed by hand: the namespace's PID 1 changed its user, which clears the
                # signal unshare --kill-child would have had the kernel send it.
                for child in children.split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(child), signal.SIGKILL)
                process.kill()
                process.wait()
        for mounted in reversed(mounts):
            subprocess.run(["umount", "-l", str(mounted)], check=False)
        subprocess.run(["buildah", "umount", container], capture_output=True, check=False)
        subprocess.run(["buildah", "rm", container], capture_output=True, check=False)


@contextlib.contextmanager
def _redis(work: Path) -> Iterator[str]:
    port = _free_port()
    data = work / "redis"
    data.mkdir()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)]
    command += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline:
                raise SystemExit("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _image_config(tag: str) -> dict[str, object]:
    inspected = json.loads(_output(["podman", "image", "inspect", tag]))
    config: dict[str, object] = inspected[0]["Config"]
    return config


def _strings(config: dict[str, object], field: str) -> list[str]:
    """A list field of the image's configuration (absent or null: empty)."""
    value = config.get(field) or []
    return [str(item) for item in value] if isinstance(value, list) else [str(value)]


def _podman_uid(name: str) -> str:
    pid = _output(["podman", "inspect", "--format", "{{.State.Pid}}", name])
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return _proc_uid(int(children[0]) if children else int(pid))


def _proc_uid(pid: int) -> str:
    """The effective uid of the server: the entrypoint's last descendant (tini's child)."""
    while children := Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        pid = int(children[0])
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return line.split()[2]
    raise SystemExit(f"no Uid in /proc/{pid}/status")


def _wait_ready(base: str) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        ready = f"{base}/readyz"
        with contextlib.suppress(OSError), urllib.request.urlopen(ready, timeout=2):  # noqa: S310
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the image's server was not ready within {READY_SECONDS:.0f} s")
        time.sleep(0.25)


def _post(url: str, body: dict[str, object]) -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310 (loopback, http)
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        rolled: dict[str, Any] = json.load(answer)
    print(f"POST {url.split('/v1/', 1)[1]}: {rolled['words']}")
    return rolled


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310
        body: bytes = answer.read()
        return body


def _mount(args: list[str], mounts: list[Path], target: Path | None = None) -> None:
    _run(["mount", *args])
    mounts.append(target or Path(args[-1]))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _output(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def _run(command: list[str], *, quiet: bool = False, stdin: IO[bytes] | None = None) -> None:
    done = subprocess.run(
        command,
        stdin=stdin,
        capture_output=quiet,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        if quiet:
            print(done.stdout[-4000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {' '.join(command[:4])} ...")


@contextlib.contextmanager
def _timed(timings: dict[str, float], step: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    timings[step] = time.monotonic() - started


if __name__ == "__main__":
    sys.exit(main())
