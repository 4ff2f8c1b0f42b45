"""Schemathesis against a live server and a real Redis: every phase, every check.

Runs the ``st`` CLI (examples, coverage, fuzzing and stateful phases) with a fixed seed
and ``MAX_EXAMPLES`` fuzzed cases per operation, and hooks from schemathesis_hooks.py.
With the seed below one run generates about 12,400 cases (coverage about 11,000 of
them); the stateful phase follows the spec's links from each POST to the GETs that
read what it created (a roll's receipt -> its audit entry, a new table -> its entries,
a seed session -> its status and reveal). Zero failures of any kind are allowed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from support import LiveServer

TESTS = Path(__file__).resolve().parent
SPEC = TESTS.parent / "openapi" / "openapi.json"
SEED = 20261130
MAX_EXAMPLES = 40


def test_every_phase_and_check_passes(live_server: LiveServer, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "--config-file",
            str(TESTS / "schemathesis.toml"),
            "run",
            str(SPEC),
            "--url",
            live_server.url,
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--seed",
            str(SEED),
            "--max-examples",
            str(MAX_EXAMPLES),
            # An event stream never ends, so no case of it finishes: tests/test_events.py
            # checks that operation, with a real EventSource too.
            "--exclude-operation-id",
            "streamTableEvents",
            "--continue-on-failure",
            "--no-color",
            "--report",
            "json",
            "--report-json-path",
            str(tmp_path / "report.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]
    assert report["complete"] is True
    assert report["failures"] == [] and report["errors"] == []
    assert {name: phase["status"] for name, phase in report["phases"].items()} == {
        "examples": "success",
        "coverage": "success",
        "fuzzing": "success",
        "stateful": "success",
    }
    # Every operation but the one excluded above (the event stream).
    assert report["operations"]["tested"] == report["operations"]["total"] - 1
    assert report["test_cases"]["generated"] >= 10_000
    links = re.search(r"API Links:\s+(\d+) covered", run.stdout)
    assert links is not None and int(links.group(1)) >= 5, run.stdout[-3000:]
