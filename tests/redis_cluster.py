"""A real Redis Cluster on loopback: N masters, each a redis-server process.

``redis-server --cluster-enabled yes`` per node, then ``redis-cli --cluster create``
assigns the 16384 slots over the masters (no replicas). Each node keeps its data
(AOF) and its cluster config in its own folder, so a stopped master can come back
with its slots and its tables.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

from fairroll.redis_server import find_redis_server

__all__ = ["RedisCluster"]


class RedisNode:
    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                find_redis_server(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
                # Keep serving the slots that are up when a master is down (the default,
                # "yes", makes every node answer CLUSTERDOWN once the loss is noticed).
                "--cluster-require-full-coverage",
                "no",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.wait(lambda: self.cli("PING") == "PONG")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def cli(self, *args: str) -> str:
        run = subprocess.run(
            [redis_cli(), "-p", str(self.port), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return run.stdout.strip()

    @staticmethod
    def wait(ready: object, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if callable(ready) and ready():
                return
            time.sleep(0.05)
        raise RuntimeError("redis cluster node did not get ready")


class RedisCluster:
    def __init__(self, folder: Path, masters: int = 3) -> None:
        self.nodes = [RedisNode(folder / f"node-{i}", cluster_port()) for i in range(masters)]

    @property
    def url(self) -> str:
        return f"redis+cluster://{self.nodes[0].address}"

    def start(self) -> RedisCluster:
        for node in self.nodes:
            node.start()
        created = subprocess.run(
            [
                redis_cli(),
                "--cluster",
                "create",
                *(node.address for node in self.nodes),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(created.stdout + created.stderr)
        self.wait_ok()
        return self

    def wait_ok(self) -> None:
        for node in self.nodes:
            RedisNode.wait(lambda n=node: "cluster_state:ok" in n.cli("CLUSTER", "INFO"))

    def node_of(self, key: str) -> RedisNode:
        slot = int(self.nodes[0].cli("CLUSTER", "KEYSLOT", key))
        for line in self.nodes[0].cli("CLUSTER", "NODES").splitlines():
            fields = line.split()
            address = fields[1].split("@")[0]
            for part in fields[8:]:
                low, _, high = part.partition("-")
                if part[0].isdigit() and int(low) <= slot <= int(high or low):
                    return next(n for n in self.nodes if n.address == address)
        raise LookupError(key)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def cluster_port() -> int:
    """A port that is free, with its cluster bus port (port + 10000) free as well."""
    while True:
        port = random.randint(20_000, 45_000)
        if _free(port) and _free(port + 10_000):
            return port


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def redis_cli() -> str:
    found = shutil.which("redis-cli")
    if found:
        return found
    sibling = Path(find_redis_server()).with_name("redis-cli")
    if sibling.exists():
        return str(sibling)
    raise RuntimeError("redis-cli not found")
