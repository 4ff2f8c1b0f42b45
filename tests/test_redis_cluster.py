"""fairroll on a real 3-master Redis Cluster (redis-server processes on loopback).

Every key of a table carries the table's hash tag, so its chain lives in one slot
and its compare-and-append script stays atomic; tables spread over the masters.
With one master stopped, tables on the others keep rolling and its own tables
answer 503 (nothing acknowledged); when it returns, its chains go on unforked.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from redis_cluster import RedisCluster
from support import LiveServer

CONTEST = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}, "victory_levels": True}
TABLES = [f"cluster-{i}" for i in range(48)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    started = RedisCluster(tmp_path_factory.mktemp("cluster")).start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def server(cluster: RedisCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    live = LiveServer(
        cluster.url,
        tmp_path_factory.mktemp("fairroll") / "server.log",
        env={"FAIRROLL_REDIS_TIMEOUT": "2"},
    )
    yield live.url
    live.stop()


def roll_everywhere(url: str, rounds: int = 1) -> dict[str, list[int]]:
    """Roll ``rounds`` times on every table, 16 requests at a time; statuses by table."""

    def roll(table: str) -> tuple[str, int]:
        with httpx.Client(base_url=url, timeout=10) as client:
            response = client.post("/v1/tft/contests", json={**CONTEST, "table": table})
        if response.status_code == 503:
            assert response.headers["content-type"].startswith("application/problem+json")
        return table, response.status_code

    statuses: dict[str, list[int]] = {table: [] for table in TABLES}
    with ThreadPoolExecutor(16) as pool:
        for table, status in pool.map(roll, TABLES * rounds):
            statuses[table].append(status)
    return statuses


def verified(url: str, table: str) -> dict[str, object]:
    report: dict[str, object] = httpx.get(f"{url}/v1/tables/{table}/verification").json()
    return report


def test_tables_spread_over_the_masters_and_survive_one_going_down(
    cluster: RedisCluster, server: str
) -> None:
    statuses = roll_everywhere(server, rounds=3)
    assert all(s == [200, 200, 200] for s in statuses.values()), statuses
    for table in TABLES:
        report = verified(server, table)
        assert report["ok"] is True and report["entries"] == 3, (table, report)

    by_master: dict[int, list[str]] = {node.port: [] for node in cluster.nodes}
    for table in TABLES:
        by_master[cluster.node_of("{" + table + "}").port].append(table)
    assert all(by_master.values()), f"a master got no table: {by_master}"
    # ...and each master really holds its tables' chains (and no one else's).
    for node in cluster.nodes:
        logs = set(node.cli("--scan", "--pattern", "fairroll:{cluster-*}:log").split())
        assert logs == {f"fairroll:{{{t}}}:log" for t in by_master[node.port]}

    down = cluster.nodes[1]
    down.stop()
    try:
        # Past the node timeout (2 s): the others have noticed, and still serve their slots.
        time.sleep(3)
        during = roll_everywhere(server)
        for table, [status] in during.items():
            expected = 503 if table in by_master[down.port] else 200
            assert status == expected, (table, status)
    finally:
        down.start()
        cluster.wait_ok()

    after = roll_everywhere(server)
    assert all(s == [200] for s in after.values()), after
    for table in TABLES:
        report = verified(server, table)
        entries = 4 if table in by_master[down.port] else 5
        assert report["ok"] is True and report["entries"] == entries, (table, report)
