"""The deployment files parse, and the dashboard asks for metrics the service exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def test_compose_stack_has_the_four_services_and_aof() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert set(compose["services"]) == {"fairroll", "redis", "prometheus", "grafana"}
    assert "--appendonly" in compose["services"]["redis"]["command"]
    assert compose["services"]["fairroll"]["environment"]["REDIS_URL"].startswith("redis://redis")
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
