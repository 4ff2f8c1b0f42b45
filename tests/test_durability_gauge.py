"""``fairroll_audit_durable`` says what Redis guarantees now, without anyone asking
``/readyz``: compose and Kubernetes probe ``/livez``, and the critical alert
``FairrollNotDurable`` (deploy/alerts.yml) fires on this gauge."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from fairroll.redis_server import RedisServer, free_port
from support import TEST_SIGNING_KEY


def durable_gauge(url: str) -> float | None:
    for line in httpx.get(f"{url}/metrics", timeout=5).text.splitlines():
        if line.startswith("fairroll_audit_durable"):
            return float(line.split()[-1])
    return None


def test_the_durability_gauge_is_set_at_startup_without_readyz(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "FAIRROLL_"))}
    env.update(REDIS_URL=redis_server.url, FAIRROLL_SIGNING_KEY=TEST_SIGNING_KEY)
    server = subprocess.Popen(
        [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)],
        env=env,
        stdout=(tmp_path / "serve.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        seen = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and seen is None:
            try:
                # Only /livez and /metrics: nothing asks /readyz.
                if httpx.get(f"{url}/livez", timeout=1).status_code == 200:
                    seen = durable_gauge(url)
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        assert seen == 1.0, (seen, (tmp_path / "serve.log").read_text())
    finally:
        server.terminate()
        server.wait(30)
