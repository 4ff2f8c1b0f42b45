"""What the README shows is what the service answers: its TFT contest (the request, and
the words it quotes), the number of roll mechanics it counts, the files it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from fairroll.mechanics import MECHANICS

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
