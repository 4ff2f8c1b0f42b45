"""Every rules page shows one request per roll mechanic of its system, a curl command a
newcomer can paste, with the words it answers: each is sent as written (read with the
shell's own quoting) to a live server, and the words must be the ones the page quotes."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import httpx

from fairroll.mechanics import MECHANICS

RULES = Path(__file__).resolve().parent.parent / "docs" / "rules"
CURL = re.compile(r"<!-- curl -->\n```sh\n(curl .*?)\n```\n\nanswers `\"text\": \"(.*?)\"`", re.S)


def examples(page: Path) -> list[tuple[str, dict[str, object], str]]:
    """(path, body, quoted words) of each curl example on a page."""
    found = []
    for command, quoted in CURL.findall(page.read_text()):
        words = shlex.split(command)
        assert words[:4] == ["curl", "-s", "-X", "POST"], command
        url = words[4]
        assert url.startswith("localhost:8000/v1/"), url
        assert words[5:7] == ["-H", "content-type: application/json"] and words[7] == "-d"
        found.append((url.removeprefix("localhost:8000"), json.loads(words[8]), quoted))
    return found


def test_every_roll_mechanic_has_a_curl_example_in_its_rules_page() -> None:
    for name, mechanic in MECHANICS.items():
        system = name.split(".", 1)[0]
        paths = [path for path, _, _ in examples(RULES / f"{system}.md")]
        assert f"/v1/{system}{mechanic.path}" in paths, (name, paths)


def test_each_curl_example_answers_the_words_its_page_quotes(client: httpx.Client) -> None:
    sent = 0
    for page in sorted(RULES.glob("*.md")):
        for path, body, quoted in examples(page):
            answer = client.post(path, json={**body, "table": "docs-examples"})
            assert answer.is_success, (page.name, path, answer.text)
            assert answer.json()["words"]["text"] == quoted, (page.name, path)
            sent += 1
    assert sent >= len(MECHANICS)
