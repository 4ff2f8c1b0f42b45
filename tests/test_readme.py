"""What the README shows is what the service answers: its TFT contest (the request, and
the words it quotes), the number of roll mechanics it counts, the files it names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx

from fairroll.audit import load_signer
from fairroll.mechanics import MECHANICS
from support import TEST_SIGNING_KEY, LiveServer

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_tft_contest_answers_what_the_readme_quotes(client: httpx.Client) -> None:
    section = README.split("## A TFT contest", 1)[1]
    body = json.loads(re.search(r"-d '(\{.*?\})'", section, re.S).group(1))  # type: ignore[union-attr]
    quoted = re.search(r'"text": "([^"]+)"', section).group(1)  # type: ignore[union-attr]
    answer = client.post("/v1/tft/contests", json={**body, "table": "readme"}).json()
    assert answer["words"]["text"] == quoted
    assert answer["seed"] == body["seed"] and answer["source"] == "chosen"


def test_the_readme_counts_the_roll_mechanics_and_names_files_that_exist() -> None:
    counted = re.search(r"Pick any of the (\d+) roll mechanics", README)
    assert counted is not None and int(counted.group(1)) == len(MECHANICS)
    for named in re.findall(r"`((?:clients|docs|scripts|deploy|k8s)/[\w./-]+)`", README):
        assert (ROOT / named.rstrip("/")).exists(), named


def test_the_readme_verify_walkthrough_works_the_first_time_and_the_next(
    client: httpx.Client, live_server: LiveServer, tmp_path: Path
) -> None:
    """The README's verify commands as written (on a table of this test's own, against
    the live server, with the root its operator knows), then again with the checkpoint
    they kept: OK the first time, and consistent with it the next."""
    section = README.split("## Verifying rolls offline", 1)[1]
    commands = re.search(r"```\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    table = "readme-verify"
    root = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).certificate.certified_by
    script = (
        commands.replace("localhost:8000", live_server.url)
        .replace("/tables/default/", f"/tables/{table}/")
        .replace("<root key id>", root)
        .replace("fairroll verify", f"{sys.executable} -m fairroll.cli verify")
    )
    client.post("/v1/dice/rolls", json={"formula": "2d6", "table": table})

    def run(text: str) -> str:
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", text],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        return ran.stdout

    first = run(script).splitlines()
    assert first[0].startswith("OK: "), first
    assert any(line.startswith("keep: the signed checkpoint") for line in first)
    assert (tmp_path / "kept-checkpoint.txt").read_text().startswith(f"fairroll/{table}\n")
    client.post("/v1/dice/rolls", json={"formula": "2d6", "table": table})
    verify = next(line for line in script.splitlines() if " verify " in line)
    again = run(script.split(verify)[0] + verify + " --since kept-checkpoint.txt").splitlines()
    assert again[0].startswith("OK: "), again
    assert any(line.startswith("consistent with the kept checkpoint") for line in again), again
