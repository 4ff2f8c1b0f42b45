"""A Redis Cluster failover with a lagging replica, counted (issue 39).

Three masters, each with one replica, on loopback; one fairroll process with
``FAIRROLL_REQUIRE_REPLICAS=1`` (on a cluster: ``WAIT 1`` on the primary of each
table's shard, after that shard's round). The replica of one shard is cut from its
primary (SIGSTOP: the stand-in for an iptables cut, which needs root), the primary is
killed -9, the frozen replica too (what sat unread in its socket is gone as a dropped
packet is), and the replica restarts from its own AOF and is elected primary. The
issue counted 284 acknowledged rolls gone after such a failover, with the server's own
verification still ``ok``: a cluster had no replica wait. The target: 0 lost, forked
or doubled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from redis_cluster import RedisCluster, RedisNode, cluster_port, redis_cli
from support import LiveServer
from test_cluster_faults import TABLES, Load, count

CUT_SECONDS = 2.0


class ReplicatedCluster(RedisCluster):
    """``RedisCluster`` with one replica per master."""

    def __init__(self, folder: Path, masters: int = 3) -> None:
        self.masters = masters
        self.nodes = [RedisNode(folder / f"node-{i}", cluster_port()) for i in range(masters * 2)]

    def start(self) -> ReplicatedCluster:
        for node in self.nodes:
            node.start()
        created = subprocess.run(
            [
                redis_cli(),
                "--cluster",
                "create",
                *(node.address for node in self.nodes),
                "--cluster-replicas",
                "1",
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

    def replica_of(self, primary: RedisNode) -> RedisNode:
        """The replica the cluster gives ``primary``, once it is attached."""
        me = primary.cli("CLUSTER", "MYID")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for line in primary.cli("CLUSTER", "NODES").splitlines():
                fields = line.split()
                if len(fields) > 3 and fields[3] == me and "slave" in fields[2]:
                    address = fields[1].split("@")[0]
                    node = next(n for n in self.nodes if n.address == address)
                    if "master_link_status:up" in node.cli("INFO", "replication"):
                        return node
            time.sleep(0.1)
        raise RuntimeError("the primary has no attached replica")

    def wait_ok(self) -> None:
        for node in self.nodes:
            if node.process is not None:
                RedisNode.wait(lambda n=node: "cluster_state:ok" in n.cli("CLUSTER", "INFO"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplicatedCluster]:
    started = ReplicatedCluster(tmp_path_factory.mktemp("replicated")).start()
    yield started
    started.stop()


@pytest.mark.slow
def test_a_failover_with_a_lagging_replica_loses_no_acknowledged_roll(
    cluster: ReplicatedCluster, tmp_path: Path
) -> None:
    server = LiveServer(
        cluster.url,
        tmp_path / "server.log",
        env={"FAIRROLL_REDIS_TIMEOUT": "1", "FAIRROLL_REQUIRE_REPLICAS": "1"},
    )
    try:
        first = cluster.node_of("{" + TABLES[0] + "}")
        tables = [t for t in TABLES if cluster.node_of("{" + t + "}").port == first.port]
        replica = cluster.replica_of(first)
        assert first.process is not None and replica.process is not None
        with Load(server.url, tables) as load:
            time.sleep(1.5)
            os.kill(replica.process.pid, signal.SIGSTOP)
            cut = time.monotonic()
            time.sleep(CUT_SECONDS)
            first.process.kill()
            first.process.wait()
            first.process = None
            replica.process.kill()
            replica.process.wait()
            replica.process = None
            replica.start()
            # Restarted, it has not seen its primary since: let it stand for election.
            replica.cli("CONFIG", "SET", "cluster-replica-validity-factor", "0")
            RedisNode.wait(lambda: "role:master" in replica.cli("INFO", "replication"), 30)
            promoted = time.monotonic() - cut - CUT_SECONDS
            cluster.wait_ok()
            time.sleep(3.0)
        during = [a for a in load.acked if cut + 0.5 <= a[0] < cut + CUT_SECONDS]
        counts = count(server.url, load, tables)
    finally:
        server.stop()
    print(  # noqa: T201 (docs/operations.md quotes it, with -s)
        f"\ncluster failover: {counts}, 503s {len(load.unavailable)}, "
        f"{len(during)} acknowledged while cut, promoted after {promoted:.1f} s"
    )
    assert counts["acked"] > 0, counts
    assert during == [], f"{len(during)} acknowledged while the replica was cut"
    assert (counts["lost"], counts["forked"], counts["doubled"]) == (0, 0, 0), counts
