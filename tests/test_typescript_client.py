"""The TypeScript client under clients/typescript: generated, type-checked, run live.

What a VTT plugin does: openapi-typescript turns openapi/openapi.json into types,
openapi-fetch calls the API with them, ``tsc`` (strict) type-checks the plugin's
script against them, and Node runs it against a live server: a keyed table, one fair
roll of each system in the player's seed session, each answer checked before it is
shown, and the whole log verified by the client under the pinned root (never on the
server's word). Without a root the script says NOT VERIFIED and exits 4.
Node and npm come from the machine; packages from the lockfile (``npm ci``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairroll.audit import load_signer
from support import TEST_SIGNING_KEY, LiveServer, typescript_client_lock

CLIENT = Path(__file__).resolve().parents[1] / "clients" / "typescript"
SYSTEMS = ["tft", "fbc", "tribute", "stat-skill", "fast-battle"]
PINNED = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id


def npm(*args: str) -> subprocess.CompletedProcess[str]:
    npm_path = shutil.which("npm")
    assert npm_path is not None, "npm is needed (Debian: nodejs npm)"
    return subprocess.run(
        [npm_path, *args], cwd=CLIENT, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def built() -> Iterator[Path]:
    with typescript_client_lock():  # the package test packs from the same folder
        if not (CLIENT / "node_modules" / ".package-lock.json").exists():
            installed = npm("ci", "--no-audit", "--no-fund")
            assert installed.returncode == 0, installed.stderr
        # generate the types from the committed spec, then tsc --strict (fails on type errors)
        build = npm("run", "build")
        assert build.returncode == 0, build.stdout + build.stderr
        yield CLIENT / "dist" / "vtt-roll.js"


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    assert node is not None
    return subprocess.run(
        [node, str(script), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_vtt_script_type_checks_and_rolls_every_system_fairly(
    built: Path, live_server: LiveServer
) -> None:
    run = _run(built, live_server.url, PINNED)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    *rolls, summary = lines
    assert [r["system"] for r in rolls] == SYSTEMS
    seqs = [r["seq"] for r in rolls]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(SYSTEMS)  # a session's commit first
    assert all(r["dice"] for r in rolls)
    assert summary["verified"] is True and summary["fair"] is True
    assert summary["rolls"] == len(SYSTEMS) and summary["seqs"] == seqs
    assert summary["a_wins"].count("/") == 1


def test_the_vtt_script_without_a_root_says_not_verified(
    built: Path, live_server: LiveServer
) -> None:
    run = _run(built, live_server.url)
    assert run.returncode == 4, run.stdout + run.stderr
    assert "NOT VERIFIED" in run.stderr and run.stdout == ""


def test_the_generated_types_are_fresh_and_strict(built: Path) -> None:
    check = npm("run", "typecheck")
    assert check.returncode == 0, check.stdout + check.stderr
    generated = (CLIENT / "src" / "generated" / "fairroll.d.ts").read_text()
    assert '"/v1/tribute/tests"' in generated
    assert "Idempotency-Key" in generated
