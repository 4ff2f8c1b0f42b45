"""The deployment files parse, and the dashboard asks for metrics the service exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import yaml
from redis import Redis

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def test_compose_stack_has_its_five_services_and_aof() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    wanted = {"fairroll", "redis", "prometheus", "alertmanager", "grafana"}
    assert set(compose["services"]) == wanted
    assert "--appendonly" in compose["services"]["redis"]["command"]
    assert compose["services"]["fairroll"]["environment"]["REDIS_URL"].startswith("redis://redis")
    # No shipped file lets every origin's pages call the service.
    for shipped in [DEPLOY / "compose.yaml", *DEPLOY.glob("compose.*.yaml")]:
        service = yaml.safe_load(shipped.read_text())["services"]["fairroll"]
        origins = str(service.get("environment", {}).get("FAIRROLL_CORS_ORIGINS", ""))
        assert "*" not in origins.split(","), shipped
    scrape = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["scrape_configs"][0]
    assert scrape["metrics_path"] == "/metrics"


def test_dashboard_panels_query_exported_metrics(client: httpx.Client, table: str) -> None:
    client.post(
        "/v1/tft/contests", json={"a": {"attribute": 9}, "b": {"attribute": 9}, "table": table}
    )
    exported = set(re.findall(r"^([a-z_]+)(?:\{| )", client.get("/metrics").text, re.MULTILINE))
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "fairroll.json").read_text())
    titles = {panel["title"] for panel in dashboard["panels"]}
    for wanted in (
        "Request rate",
        "Latency",
        "Error rate",
        "Rolls per mechanic",
        "Audit append",
        "Redis errors",
    ):
        assert any(title.startswith(wanted) for title in titles), wanted
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            for metric in re.findall(r"\b(fairroll_[a-z_]+)", target["expr"]):
                assert metric in exported, f"{panel['title']}: {metric} is not exported"


def test_redis_is_durable_and_bounded_in_compose_and_kubernetes() -> None:
    """appendfsync always (an acknowledged roll is on disk), maxmemory with noeviction (a
    full Redis refuses writes rather than dropping entries), the same in both stacks."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["redis"]
    statefulset = next(
        doc
        for doc in yaml.safe_load_all((ROOT / "k8s" / "base" / "redis.yaml").read_text())
        if doc and doc["kind"] == "StatefulSet"
    )
    container = statefulset["spec"]["template"]["spec"]["containers"][0]
    for args in (compose["command"], container["args"]):
        start = args.index("--appendonly")
        flags = dict(zip(args[start::2], args[start + 1 :: 2], strict=False))
        assert flags["--appendfsync"] == "always"
        assert flags["--maxmemory-policy"] == "noeviction"
        assert flags["--maxmemory"] == "384mb"  # below the pod's 512Mi: room for the AOF fork
    assert container["resources"]["limits"]["memory"] == "512Mi"


def test_alerts_ask_for_metrics_the_service_exports(
    redis_client: Redis, client: httpx.Client
) -> None:
    redis_client.config_set("maxmemory", "200mb")  # so the memory ratio is reported
    try:
        assert client.get("/readyz").json()["redis_memory_ratio"] > 0
        exported = set(re.findall(r"^([a-z_]+)(?:\{| )", client.get("/metrics").text, re.MULTILINE))
    finally:
        redis_client.config_set("maxmemory", "0")
    assert (
        "/etc/prometheus/alerts.yml"
        in yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["rule_files"]
    )
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"][0]["rules"]
    assert {rule["alert"] for rule in rules} >= {"FairrollRedisMemoryHigh", "FairrollTableStopped"}
    for rule in rules:
        for metric in re.findall(r"\b(fairroll_[a-z_]+)", rule["expr"]):
            assert metric in exported, f"{rule['alert']}: {metric} is not exported"


def test_the_sentinel_variants_follow_the_primary_and_require_a_replica() -> None:
    """compose (an override of the stack) and Kubernetes (an overlay; CI renders and
    validates it): a durable replica, Sentinels, and fairroll pointed at them with one
    replica required."""
    compose = yaml.safe_load((DEPLOY / "compose.sentinel.yaml").read_text())["services"]
    assert set(compose) == {"fairroll", "redis-replica", "sentinel"}
    env = compose["fairroll"]["environment"]
    assert env["FAIRROLL_SENTINELS"] == "sentinel:26379" and env["FAIRROLL_REQUIRE_REPLICAS"] == "1"
    replica = compose["redis-replica"]["command"]
    assert replica[replica.index("--appendfsync") + 1] == "always" and "--replicaof" in replica
    assert "sentinel monitor fairroll redis 6379" in compose["sentinel"]["command"][0]
    overlay = ROOT / "k8s" / "overlays" / "sentinel"
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    literals = kustomization["configMapGenerator"][0]["literals"]
    assert "FAIRROLL_REQUIRE_REPLICAS=1" in literals
    assert any(item.startswith("FAIRROLL_SENTINELS=") for item in literals)
    kinds = [
        doc["kind"]
        for name in ("redis-replica.yaml", "sentinel.yaml")
        for doc in yaml.safe_load_all((overlay / name).read_text())
    ]
    assert kinds.count("StatefulSet") == 2


def test_prometheus_sends_its_alerts_to_the_compose_alertmanager() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    (target,) = prometheus["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"]
    host, port = target.split(":")
    assert host in compose and f"{port}:{port}" in compose[host]["ports"]
    manager = yaml.safe_load((DEPLOY / "alertmanager.yml").read_text())
    receivers = {r["name"] for r in manager["receivers"]}
    routes = [manager["route"], *manager["route"].get("routes", [])]
    assert all(route["receiver"] in receivers for route in routes)
    mounted = [v for v in compose["alertmanager"]["volumes"] if v.startswith("./alertmanager.yml")]
    assert mounted, compose["alertmanager"]


def test_every_alert_is_explained_in_the_operations_guide() -> None:
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"][0]["rules"]
    guide = (DEPLOY.parent / "docs" / "operations.md").read_text()
    section = guide.split("## Alerts", 1)[1].split("\n## ", 1)[0]
    for rule in rules:
        assert f"### {rule['alert']}" in section, rule["alert"]
